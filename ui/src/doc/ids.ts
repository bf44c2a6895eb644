//! Step ids (DESIGN §2): `[A-Za-z_][A-Za-z0-9_]*`, not reserved, unique in the whole
//! blueprint (loop bodies included). New ids are derived from the tool, prompt,
//! workflow or kind, with `_2`, `_3`, … appended until unique.

import type { StepTemplate } from './types';

export const STEP_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const RESERVED_STEP_IDS: ReadonlySet<string> = new Set([
  'inputs',
  'steps',
  'item',
  'index',
  'error',
  'saved',
  'run',
  'prev',
]);

/** Why `id` cannot name a new step, or null when it can. */
export function checkStepId(id: string, taken: ReadonlySet<string>): string | null {
  if (!STEP_ID_PATTERN.test(id)) return `\`${id}\` is not a valid step id: use letters, digits and _, not starting with a digit`;
  if (RESERVED_STEP_IDS.has(id)) return `\`${id}\` is reserved in templates; choose another id`;
  if (taken.has(id)) return `a step \`${id}\` already exists`;
  return null;
}

/** Turns any text into an id base: invalid characters become `_`, reserved names get `_step`. */
export function sanitizeId(text: string): string {
  let s = text.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (s === '') s = 'step';
  if (/^[0-9]/.test(s)) s = `_${s}`;
  if (s.length > 48) s = s.slice(0, 48).replace(/_+$/, '');
  if (RESERVED_STEP_IDS.has(s)) s = `${s}_step`;
  return s;
}

/** The base a new step's id is derived from. */
export function idBase(template: StepTemplate): string {
  const str = (k: string) => (typeof template[k] === 'string' ? (template[k] as string) : '');
  if (template.id) return sanitizeId(template.id.replace(/_\d+$/, ''));
  switch (template.kind) {
    case 'tool':
      return sanitizeId(str('tool') || 'tool');
    case 'prompt':
      return sanitizeId(str('prompt') || 'prompt');
    case 'workflow':
      return sanitizeId(str('workflow') || 'workflow');
    case 'resource': {
      const last = str('uri')
        .replace(/\{\{.*?\}\}/g, '')
        .split(/[/:?#]/)
        .filter(Boolean)
        .pop();
      return sanitizeId(last ? last.replace(/\.[A-Za-z0-9]+$/, '') : 'resource');
    }
    default:
      return sanitizeId(template.kind || 'step');
  }
}

/** `base`, or `base_2`, `base_3`, … — the first one not in `taken` and not reserved. */
export function uniqueId(base: string, taken: ReadonlySet<string>): string {
  const b = sanitizeId(base);
  if (!taken.has(b)) return b;
  for (let n = 2; ; n++) {
    const candidate = `${b}_${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
