//! Dependency rules of DESIGN §2 "Order", shared by the canvas mapping and the edits:
//! `after` when present; otherwise the previous step of the same list (fallback steps
//! passed over). A switch's targets depend on the switch; a fallback step depends on
//! nothing. All references resolve within one list.

import type { Step, SwitchStep } from './types';

/** Which steps of one list are fallbacks or switch targets, and of whom. */
export interface ListRoles {
  ids: Set<string>;
  /** fallback step id → the step it stands in for (the first one naming it). */
  fallbackOf: Map<string, string>;
  /** switch target id → the switch and the handle (`case-N` or `default`) routing to it. */
  switchOf: Map<string, { switch: string; handle: string }>;
}

export function listRoles(steps: readonly Step[]): ListRoles {
  const ids = new Set<string>();
  for (const s of steps) if (s && typeof s.id === 'string') ids.add(s.id);
  const fallbackOf = new Map<string, string>();
  for (const s of steps) {
    const f = s?.fallback;
    if (typeof f === 'string' && f !== s.id && ids.has(f) && !fallbackOf.has(f)) fallbackOf.set(f, s.id);
  }
  const switchOf = new Map<string, { switch: string; handle: string }>();
  for (const s of steps) {
    if (s?.kind !== 'switch') continue;
    for (const { handle, target } of switchTargets(s)) {
      if (target !== s.id && ids.has(target) && !fallbackOf.has(target) && !switchOf.has(target)) {
        switchOf.set(target, { switch: s.id, handle });
      }
    }
  }
  return { ids, fallbackOf, switchOf };
}

/** Every target of a switch with the handle it leaves from. */
export function switchTargets(sw: SwitchStep): { handle: string; caseIndex: number | 'default'; target: string }[] {
  const out: { handle: string; caseIndex: number | 'default'; target: string }[] = [];
  if (Array.isArray(sw.cases)) {
    sw.cases.forEach((c, i) => {
      if (c && Array.isArray(c.to)) for (const t of c.to) if (typeof t === 'string') out.push({ handle: `case-${i}`, caseIndex: i, target: t });
    });
  }
  if (Array.isArray(sw.default)) {
    for (const t of sw.default) if (typeof t === 'string') out.push({ handle: 'default', caseIndex: 'default', target: t });
  }
  return out;
}

/** The previous step of the list that is not a fallback step, if any. */
export function previousRunnable(steps: readonly Step[], index: number, roles: ListRoles): string | null {
  for (let i = index - 1; i >= 0; i--) {
    const s = steps[i];
    if (s && typeof s.id === 'string' && !roles.fallbackOf.has(s.id)) return s.id;
  }
  return null;
}

/** A step's dependencies as the engine sees them, split by where they come from. */
export interface StepDeps {
  /** `after` was written (possibly empty). */
  explicit: boolean;
  /**
   * The `after`-style dependencies: the written list, or the implicit previous step
   * (none for a switch target or a fallback step).
   */
  after: string[];
  /** The switch routing to this step, if any. */
  switchFrom: { switch: string; handle: string } | null;
  /** This step runs only as a fallback: it has no dependencies at all. */
  fallbackOf: string | null;
}

export function stepDeps(steps: readonly Step[], index: number, roles: ListRoles = listRoles(steps)): StepDeps {
  const step = steps[index]!;
  const fallbackOf = roles.fallbackOf.get(step.id) ?? null;
  const switchFrom = roles.switchOf.get(step.id) ?? null;
  if (Array.isArray(step.after)) {
    return { explicit: true, after: fallbackOf ? [] : step.after.slice(), switchFrom, fallbackOf };
  }
  if (fallbackOf || switchFrom) return { explicit: false, after: [], switchFrom, fallbackOf };
  const prev = previousRunnable(steps, index, roles);
  return { explicit: false, after: prev ? [prev] : [], switchFrom, fallbackOf };
}
