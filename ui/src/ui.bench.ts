// How fast the studio's pure parts are on large inputs: `npm run ui:bench` (Vitest's
// bench mode, Node without a DOM). The unit tests check the same paths for correctness
// only; the whole app's figures come from the studio's bench (`npm run perf:studio`).
import { fileURLToPath } from 'node:url';
import { bench, describe } from 'vitest';
import type { Blueprint } from './doc/types';
import { computeAutoLayout } from './graph/auto-layout';
import { docToGraph } from './graph/doc-to-graph';
import type { RunEvent } from './run/events';
import { applyEvents, startView } from './run/model';

type Generate = (opts: { steps: number; layout?: boolean; seed?: number }) => Blueprint;
const script = fileURLToPath(new URL('../../scripts/gen-blueprint.mjs', import.meta.url));
const { generateBlueprint: generate } = (await import(/* @vite-ignore */ script)) as { generateBlueprint: Generate };

const big = generate({ steps: 1000 });
const bigLaidOut = generate({ steps: 1000, layout: true });

describe('a generated 1,000-step blueprint', () => {
  bench('docToGraph, no layout', () => void docToGraph({ ...big, steps: big.steps.slice() }));
  bench('docToGraph, stored layout', () => void docToGraph({ ...bigLaidOut, steps: bigLaidOut.steps.slice() }));
  bench('computeAutoLayout (elkjs)', async () => void (await computeAutoLayout(big)), { iterations: 3, time: 0 });
});

/** A loop over 1,700 items, each iteration one call: start, finish, loop progress. */
function loopEvents(): RunEvent[] {
  const n = 1700;
  const events: RunEvent[] = [
    { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'bench', inputs: {} },
    { seq: 2, at_ms: 0, type: 'StepStarted', step: 'each', path: [], attempt: 1, args: { items: n } },
  ] as RunEvent[];
  let seq = 2;
  for (let i = 0; i < n && events.length < 5000; i++) {
    events.push(
      ...([
      { seq: ++seq, at_ms: i, type: 'StepStarted', step: 'call', path: [i], attempt: 1, args: { i } },
      { seq: ++seq, at_ms: i + 1, type: 'StepFinished', step: 'call', path: [i], status: 'succeeded', output: { i }, attempts: 1, duration_ms: 1 },
      { seq: ++seq, at_ms: i + 1, type: 'StepProgress', step: 'each', path: [], progress: i + 1, total: n, message: `${i + 1}/${n}` },
      ] as RunEvent[]),
    );
  }
  return events.slice(0, 5000);
}

describe('5,000 events of a live run', () => {
  const batch = loopEvents();
  const base = startView(['each', 'call'], { parents: { call: 'each' } });
  bench('applyEvents, one batch', () => void applyEvents(base, batch));
  bench('applyEvents, batches of 100', () => {
    let w = base;
    for (let i = 0; i < batch.length; i += 100) w = applyEvents(w, batch.slice(i, i + 100));
  });
});
