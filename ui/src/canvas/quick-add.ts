//! What the quick-add search offers: the step kinds and every tool, resource and
//! prompt the palette shows (its templates), filtered by the words typed. Pure.

import type { ServerOffer } from '../backend';
import type { StepTemplate } from '../doc/types';
import { KIND_ITEMS, matches, promptTemplate, resourceTemplate, toolTemplate } from '../panels/palette/templates';

export interface QuickItem {
  /** Unique: `kind-<kind>`, `tool-<server>-<name>`, … */
  key: string;
  kind: string;
  label: string;
  detail: string;
  template: StepTemplate;
}

/** At most this many items are listed (type to narrow). */
export const QUICK_MAX = 60;

export function quickItems(offers: readonly ServerOffer[]): QuickItem[] {
  const out: QuickItem[] = KIND_ITEMS.map((k) => ({
    key: `kind-${k.key ?? k.kind}`,
    kind: k.kind,
    label: k.label,
    detail: k.description,
    template: k.template,
  }));
  for (const o of offers) {
    for (const t of o.tools) {
      out.push({ key: `tool-${o.server}-${t.name}`, kind: 'tool', label: t.name, detail: `${o.server} · ${t.description ?? ''}`, template: toolTemplate(t) });
    }
    for (const r of o.resources) {
      out.push({ key: `resource-${o.server}-${r.uri}`, kind: 'resource', label: r.name || r.uri, detail: `${o.server} · ${r.uri}`, template: resourceTemplate(r) });
    }
    for (const p of o.prompts) {
      out.push({ key: `prompt-${o.server}-${p.name}`, kind: 'prompt', label: p.name, detail: `${o.server} · ${p.description ?? ''}`, template: promptTemplate(p) });
    }
  }
  return out;
}

export function filterQuick(items: readonly QuickItem[], query: string): QuickItem[] {
  return items.filter((it) => matches(query, it.label, it.detail, it.kind)).slice(0, QUICK_MAX);
}

/** The template as added by the quick-add: not wired to anything (`after: []`) unless it says so. */
export function unconnected(template: StepTemplate): StepTemplate {
  return 'after' in template ? template : { ...template, after: [] };
}
