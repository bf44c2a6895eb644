//! The scope a template is previewed against (issue 33, point 3): the run on the
//! canvas when one is shown (live or from History), else the newest run in History of
//! the blueprint on the canvas, read once. `null`: no run yet.
//!
//! Like the canvas's run view (`run/model.ts` `scopeAt`): `inputs`, `run`, each
//! finished step's output under its id and its record under `steps.<id>`. For a step
//! in a loop body, the first iteration's loop variable and `index` when the loop's list
//! is written in the blueprint, and that iteration's body outputs.

import { useEffect, useMemo, useState } from 'react';
import { backend } from '../../backend';
import { findStep, locateStep, type Blueprint, type Json, type LoopStep } from '../../doc';
import { docStore, useDoc } from '../../doc/store';
import { applyEvents, instanceAt, runShape, scopeAt, startView, useRunStore, type RunEvent, type RunView } from '../../run';
import { useSession } from '../run/session';

export interface LastRun {
  runId: string | null;
  view: RunView;
}

/** Views of History runs already read, by run id. */
const read = new Map<string, RunView>();

function viewOf(doc: Blueprint, events: readonly RunEvent[], startedAt: string): RunView {
  const { stepIds, parents } = runShape(doc);
  return applyEvents(startView(stepIds, { parents, startedAt }), events);
}

/** The run previews are computed against: the one shown, else the newest in History. */
export function useLastRun(): LastRun | null {
  const mode = useRunStore((s) => s.mode);
  const shownId = useRunStore((s) => s.runId);
  const shownView = useRunStore((s) => s.view);
  const docId = useDoc((s) => s.doc.id);
  const newest = useSession((s) => (s.historyFor === docId ? (s.history[0] ?? null) : null));
  const [, loaded] = useState(0);
  useEffect(() => {
    if (mode !== 'idle' || !newest || read.has(newest.id)) return;
    let live = true;
    backend
      .getRun(newest.id)
      .then((detail) => {
        read.set(newest.id, viewOf(docStore.getState().doc, (Array.isArray(detail.events) ? detail.events : []) as RunEvent[], detail.info.started_at));
        if (live) loaded((n) => n + 1);
      })
      .catch(() => {
        // No preview from this run: the field says "no run yet".
      });
    return () => {
      live = false;
    };
  }, [mode, newest]);
  if (mode !== 'idle') return { runId: shownId, view: shownView };
  const view = newest ? read.get(newest.id) : undefined;
  return view && newest ? { runId: newest.id, view } : null;
}

/** The scope of a template in step `stepId` against `run` (see the module's note). */
export function scopeFor(doc: Blueprint, stepId: string | null, run: LastRun): Record<string, Json> {
  const scope = { ...(scopeAt(run.view) as Record<string, Json>) };
  if (!stepId) return scope;
  // In a loop body: the first iteration (its variable, index and body outputs).
  const loopId = locateStep(doc, stepId)?.container ?? null;
  const loop = loopId ? findStep(doc, loopId) : undefined;
  if (loop && loop.kind === 'loop') {
    const l = loop as LoopStep;
    if (Array.isArray(l.for_each) && l.for_each.length > 0) scope[l.as ?? 'item'] = l.for_each[0]!;
    scope.index = 0;
    for (const body of Array.isArray(l.steps) ? l.steps : []) {
      const f = instanceAt(run.view, body.id, [0]);
      if (f?.state === 'succeeded') scope[body.id] = f.output ?? null;
    }
  }
  return scope;
}

/** `useLastRun` and `scopeFor` together, for step `stepId`. */
export function usePreviewScope(stepId: string | null): { runId: string | null; scope: Record<string, Json> } | null {
  const run = useLastRun();
  const doc = useDoc((s) => s.doc);
  return useMemo(() => (run ? { runId: run.runId, scope: scopeFor(doc, stepId, run) } : null), [run?.runId, run?.view, doc, stepId]); // eslint-disable-line react-hooks/exhaustive-deps
}
