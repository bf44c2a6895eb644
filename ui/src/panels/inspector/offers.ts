//! What the configured servers offer (tools with their input schemas, resources,
//! prompts), as the inspector needs it. The shell feeds it:
//!
//! ```ts
//! import { setToolSchemas } from './panels/inspector';
//! const r = await commands.serverOffers();
//! if (r.status === 'ok') setToolSchemas(r.data);
//! ```
//!
//! `<Inspector offers={…} />` overrides the store (tests, previews).

import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { ServerOffer } from '../../bindings';
import type { JsonObject } from '../../doc';

export interface OfferedTool {
  server: string;
  name: string;
  description?: string | null;
  input_schema: unknown;
  /** The schema of its structured output, when the server gives one (completion of output fields). */
  output_schema?: unknown;
  /** The tool's MCP annotations as its server sent them (none: not destructive here). */
  annotations?: { destructiveHint?: boolean | null; readOnlyHint?: boolean | null } | null;
}
export interface OfferedPrompt {
  server: string;
  name: string;
  description?: string | null;
  arguments: { name: string; description?: string | null; required: boolean }[];
}
export interface OfferedResource {
  server: string;
  uri: string;
  name: string;
  description?: string | null;
  mime_type?: string | null;
}
/** One server's offer (the shape of `serverOffers()`'s items). */
export interface Offer {
  server: string;
  tools: OfferedTool[];
  resources: OfferedResource[];
  prompts: OfferedPrompt[];
  error?: { code: string; message: string } | null;
}

interface OffersState {
  offers: readonly Offer[];
}

export const offersStore = createStore<OffersState>()(() => ({ offers: [] }));

/** Gives the inspector what the servers offer (the result of `commands.serverOffers()`). */
export function setToolSchemas(offers: readonly (ServerOffer | Offer)[]): void {
  offersStore.setState({ offers: offers as readonly Offer[] });
}

/** `<Inspector offers>` overrides the store through this. */
export const OffersOverride = createContext<readonly Offer[] | null>(null);

export function useOffers(): readonly Offer[] {
  const override = useContext(OffersOverride);
  const stored = useStore(offersStore, (s) => s.offers);
  return override ?? stored;
}

/** The tool a step calls: by server and name, or by name alone when it is unique. */
export function findTool(offers: readonly Offer[], server: string | undefined, tool: string | undefined): OfferedTool | undefined {
  if (!tool) return undefined;
  if (server) return offers.find((o) => o.server === server)?.tools?.find((t) => t.name === tool);
  const all = offers.flatMap((o) => o.tools ?? []).filter((t) => t.name === tool);
  return all.length === 1 ? all[0] : undefined;
}

export function findPrompt(offers: readonly Offer[], server: string | undefined, prompt: string | undefined): OfferedPrompt | undefined {
  if (!prompt) return undefined;
  if (server) return offers.find((o) => o.server === server)?.prompts?.find((p) => p.name === prompt);
  const all = offers.flatMap((o) => o.prompts ?? []).filter((p) => p.name === prompt);
  return all.length === 1 ? all[0] : undefined;
}

/** The tool's input schema as an object schema, or undefined when unknown/unusable. */
export function inputSchemaOf(tool: OfferedTool | undefined): JsonObject | undefined {
  const s = tool?.input_schema;
  if (!s || typeof s !== 'object' || Array.isArray(s)) return undefined;
  return s as JsonObject;
}

/** Server names: the offers', the blueprint's own `servers`, and `extra` (e.g. the current value). */
export function knownServers(offers: readonly Offer[], docServers: object | undefined, extra?: string): string[] {
  const names = new Set<string>();
  for (const o of offers) names.add(o.server);
  if (docServers && typeof docServers === 'object') for (const k of Object.keys(docServers)) names.add(k);
  if (extra) names.add(extra);
  return [...names].sort((a, b) => a.localeCompare(b));
}

/** Whether a tool says it may destroy data: `destructiveHint: true` and not `readOnlyHint: true`. */
export function isDestructive(tool: OfferedTool | undefined): boolean {
  const a = tool?.annotations;
  return !!a && a.destructiveHint === true && a.readOnlyHint !== true;
}
