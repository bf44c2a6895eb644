//! Step templates for the palette: what a drop (or Enter) inserts. A tool step comes
//! with its required arguments pre-filled from the tool's input schema (the schema's
//! `default`, `const` or first `enum` value, else an empty value of the right type),
//! a prompt step with its required arguments as empty strings.

import type { Json, JsonObject, StepKind, StepTemplate } from '../../doc/types';
import type { PromptInfo, ResourceInfo, ToolInfo } from '../../backend';

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => !!v && typeof v === 'object' && !Array.isArray(v);
const clone = (v: unknown): Json => JSON.parse(JSON.stringify(v ?? null)) as Json;
const MAX_DEPTH = 6;

/** A `#/…` JSON Pointer inside the root schema (`$defs`, `definitions`), or undefined. */
function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return isObject(at) ? at : undefined;
}

/** The schema with `$ref` followed and `allOf` merged (shallowly: properties and required). */
function normalize(schema: Schema, root: Schema, depth: number): Schema {
  let s = schema;
  for (let hops = 0; typeof s.$ref === 'string' && hops < 8; hops++) {
    const target = resolveRef(root, s.$ref);
    if (!target) break;
    const rest: Schema = { ...s };
    delete rest.$ref;
    s = { ...target, ...rest };
  }
  if (Array.isArray(s.allOf) && depth < MAX_DEPTH) {
    const merged: Schema = { ...s };
    delete merged.allOf;
    const properties: Schema = isObject(s.properties) ? { ...s.properties } : {};
    const required = new Set<string>(Array.isArray(s.required) ? s.required.filter((r) => typeof r === 'string') : []);
    for (const part of s.allOf) {
      if (!isObject(part)) continue;
      const p = normalize(part, root, depth + 1);
      for (const [k, v] of Object.entries(p)) if (!(k in merged) && k !== 'properties' && k !== 'required') merged[k] = v;
      if (isObject(p.properties)) Object.assign(properties, p.properties);
      if (Array.isArray(p.required)) for (const r of p.required) if (typeof r === 'string') required.add(r);
    }
    if (Object.keys(properties).length) merged.properties = properties;
    if (required.size) merged.required = [...required];
    s = merged;
  }
  return s;
}

/** A starting value for a schema: its default, const or first enum value, else an empty value of its type. */
export function exampleValue(schema: unknown, root: Schema = isObject(schema) ? schema : {}, depth = 0): Json {
  if (!isObject(schema) || depth > MAX_DEPTH) return '';
  const s = normalize(schema, root, depth);
  if ('default' in s) return clone(s.default);
  if ('const' in s) return clone(s.const);
  if (Array.isArray(s.enum) && s.enum.length) return clone(s.enum[0]);
  const types = (Array.isArray(s.type) ? s.type : [s.type]).filter((t): t is string => typeof t === 'string');
  const type = types.find((t) => t !== 'null') ?? types[0];
  if (!type) {
    const branch = [s.anyOf, s.oneOf].flatMap((b) => (Array.isArray(b) ? b : [])).find((b) => isObject(b) && b.type !== 'null');
    if (branch) return exampleValue(branch, root, depth + 1);
    if (isObject(s.properties)) return requiredValues(s, root, depth + 1);
    return '';
  }
  switch (type) {
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' && s.minimum > 0 ? s.minimum : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return requiredValues(s, root, depth + 1);
    case 'null':
      return null;
    default:
      return '';
  }
}

/** `{ name: starting value }` for every required property (in the order the schema lists them). */
function requiredValues(schema: Schema, root: Schema, depth: number): JsonObject {
  const s = normalize(schema, root, depth);
  const required = Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : [];
  const properties = isObject(s.properties) ? s.properties : {};
  const names = [...Object.keys(properties).filter((k) => required.includes(k)), ...required.filter((r) => !(r in properties))];
  const out: JsonObject = {};
  for (const name of names) out[name] = depth > MAX_DEPTH ? '' : exampleValue(properties[name], root, depth);
  return out;
}

/** The required arguments of a tool's input schema, pre-filled. */
export function requiredArgs(inputSchema: unknown): JsonObject {
  return isObject(inputSchema) ? requiredValues(inputSchema, inputSchema, 0) : {};
}

export function toolTemplate(tool: Pick<ToolInfo, 'server' | 'name' | 'input_schema'>): StepTemplate {
  return { kind: 'tool', server: tool.server, tool: tool.name, args: requiredArgs(tool.input_schema) };
}

export function resourceTemplate(resource: Pick<ResourceInfo, 'server' | 'uri'>): StepTemplate {
  return { kind: 'resource', server: resource.server, uri: resource.uri };
}

export function promptTemplate(prompt: Pick<PromptInfo, 'server' | 'name' | 'arguments'>): StepTemplate {
  const args: JsonObject = {};
  for (const a of prompt.arguments ?? []) if (a.required) args[a.name] = '';
  return { kind: 'prompt', server: prompt.server, prompt: prompt.name, args };
}

export interface KindItem {
  kind: StepKind;
  /** Tells apart items of one kind (`approval` is an `input`); the kind when absent. */
  key?: string;
  label: string;
  description: string;
  template: StepTemplate;
}

/** The step kinds, each with a template holding the fields its kind requires. */
export const KIND_ITEMS: readonly KindItem[] = [
  {
    kind: 'transform',
    label: 'Transform',
    description: 'Build a value from templates over inputs and earlier outputs',
    template: { kind: 'transform', value: {} },
  },
  {
    kind: 'switch',
    label: 'Switch',
    description: 'Route to the steps of the first case whose condition holds',
    template: { kind: 'switch', cases: [{ when: '', to: [] }], default: [] },
  },
  {
    kind: 'loop',
    label: 'Loop',
    description: 'Run a body for each item of a list, or until a condition holds',
    template: { kind: 'loop', for_each: '', steps: [] },
  },
  {
    kind: 'workflow',
    label: 'Workflow',
    description: 'Run another stored blueprint and use its output',
    template: { kind: 'workflow', workflow: '', args: {} },
  },
  { kind: 'wait', label: 'Wait', description: 'Pause for a number of milliseconds', template: { kind: 'wait', ms: 1000 } },
  {
    kind: 'input',
    label: 'Ask a person',
    description: 'Wait for a person to type a value (a form in the studio, a prompt on a terminal)',
    template: { kind: 'input', prompt: 'What value?', schema: { type: 'string' } },
  },
  {
    kind: 'input',
    key: 'approval',
    label: 'Approval',
    description: 'Wait for a person to approve (or reject) before the steps after it run',
    template: { kind: 'input', prompt: 'Go ahead?', approve: true },
  },
  {
    kind: 'tool',
    label: 'Tool call',
    description: 'Call a tool of an MCP server (pick it in the inspector)',
    template: { kind: 'tool', tool: '', args: {} },
  },
  {
    kind: 'resource',
    label: 'Resource read',
    description: 'Read a resource of an MCP server by URI',
    template: { kind: 'resource', server: '', uri: '' },
  },
  {
    kind: 'prompt',
    label: 'Prompt get',
    description: 'Get a prompt’s messages from an MCP server',
    template: { kind: 'prompt', server: '', prompt: '', args: {} },
  },
];

/** Whether every word of the query is in one of the texts (case-insensitive). */
export function matches(query: string, ...texts: (string | null | undefined)[]): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const hay = texts.filter(Boolean).join(' ').toLowerCase();
  return words.every((w) => hay.includes(w));
}
