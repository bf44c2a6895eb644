//! Which canvas edges a `DEPENDENCY_CYCLE` diagnostic is about. The validator points at
//! the `after` entry that closes the cycle (`/steps/1/after/0`): that one edge. An older
//! pointer names only a step of the cycle (`/steps/1`): then every edge of the cycle
//! through that step, found here the way the engine orders steps (`doc/deps.ts`).
//! Edge ids are `doc-to-graph.ts`'s (`after:a->b`, `case:sw:i->t`).

import { listRoles, stepDeps, switchTargets } from './deps';
import { containerSteps, locateStep, resolvePointer } from './query';
import type { Blueprint, Diagnostic, Step, SwitchStep } from './types';

export const CYCLE_CODE = 'DEPENDENCY_CYCLE';

/** A string that changes only when the dependency-cycle diagnostics among `list` do. */
export function cycleDiagnosticsKey(list: readonly Diagnostic[]): string {
  let key = '';
  for (const d of list) if (d.code === CYCLE_CODE) key += `${d.pointer}\u0000${d.step ?? ''}\n`;
  return key;
}

/** The ids of the edges a cycle diagnostic highlights (empty for other diagnostics). */
export function cycleEdgeIds(doc: Blueprint, d: Diagnostic): string[] {
  if (d.code !== CYCLE_CODE) return [];
  const { step, field } = resolvePointer(doc, d.pointer ?? '');
  const id = step ?? d.step ?? null;
  if (!id) return [];
  const loc = locateStep(doc, id);
  if (!loc) return [];
  const m = /^\/after\/(\d+)$/.exec(field ?? '');
  if (m) {
    const source = Array.isArray(loc.step.after) ? loc.step.after[Number(m[1])] : undefined;
    return typeof source === 'string' ? [`after:${source}->${id}`] : [];
  }
  return cycleThrough(containerSteps(doc, loc.container)!, id);
}

/** The edges of a dependency cycle through `id` in one list, in run order; empty if there is none. */
export function cycleThrough(steps: readonly Step[], id: string): string[] {
  const roles = listRoles(steps);
  const index = new Map(steps.map((s, i) => [s?.id, i]));
  // What a step waits for: its `after` (written or implicit) and the switch routing to it.
  const depsOf = (sid: string): { dep: string; edge: string }[] => {
    const i = index.get(sid);
    if (i === undefined) return [];
    const d = stepDeps(steps, i, roles);
    const out = d.after.map((a) => ({ dep: a, edge: `after:${a}->${sid}` }));
    if (d.switchFrom) {
      const sw = steps[index.get(d.switchFrom.switch)!] as SwitchStep;
      const t = switchTargets(sw).find((x) => x.target === sid);
      if (t) out.push({ dep: sw.id, edge: `case:${sw.id}:${t.caseIndex}->${sid}` });
    }
    return out;
  };
  // Depth-first from `id` along dependencies until it comes back to `id`.
  const seen = new Set<string>();
  const path: string[] = [];
  const walk = (cur: string): boolean => {
    for (const { dep, edge } of depsOf(cur)) {
      if (dep === id) {
        path.push(edge);
        return true;
      }
      if (seen.has(dep)) continue;
      seen.add(dep);
      path.push(edge);
      if (walk(dep)) return true;
      path.pop();
    }
    return false;
  };
  return walk(id) ? path.reverse() : [];
}
