#!/usr/bin/env node
// Generates a large, valid blueprint for performance work on the studio (and the
// engine): a realistic mix rather than one long list.
//
//   start ─▶ phase 1: lanes in parallel ─▶ hub ─▶ phase 2: lanes ─▶ hub ─▶ …
//
// Every lane is a run of segments: pipelines with `{{ prev }}` (implicit order), steps
// reading earlier steps of their lane by id, fan-out/fan-in diamonds (`after`), switch
// diamonds (three targets rejoined), `for_each` and `until` loops with bodies, and a
// retried tool step with a fallback. Tool steps call the demo `echo` fixture server
// (`echo`, `add`). Deterministic for a given --seed. Exactly --steps steps, loop
// bodies included.
//
// Usage: node scripts/gen-blueprint.mjs --steps 1000 [--layout] [--seed 1] > file.json
//   --layout   also write a `layout` (columns by dependency depth), so the studio opens
//              it without placing anything itself.
// As a module: import { generateBlueprint } from './gen-blueprint.mjs'.

import { pathToFileURL } from 'node:url';

const NODE_WIDTH = 240;
const NODE_HEIGHT = 110;
const CASE_ROW_HEIGHT = 22;
const GAP_X = 80;
const GAP_Y = 40;
const LOOP_HEADER = 72;
const LOOP_PADDING = 24;

/** A small deterministic PRNG (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
  };
}

const WORDS = ['pods', 'nodes', 'services', 'volumes', 'jobs', 'routes', 'users', 'orders', 'invoices', 'events'];

/**
 * Returns a blueprint with exactly `steps` steps (loop bodies included; at least 3).
 * `layout`: add a `layout` for every step.
 */
export function generateBlueprint({ steps: total = 1000, layout = false, seed = 1 } = {}) {
  if (!Number.isInteger(total) || total < 3) throw new Error('--steps must be an integer ≥ 3');
  const r = rng(seed);
  const top = [];
  let used = 0;
  let serial = 0;
  const id = (what) => `${what}_${String(++serial).padStart(4, '0')}`;

  const echo = (sid, message, extra = {}) => ({ id: sid, kind: 'tool', server: 'echo', tool: 'echo', ...extra, args: { message } });
  const add = (sid, extra = {}) => ({
    id: sid,
    kind: 'tool',
    server: 'echo',
    tool: 'add',
    ...extra,
    args: { a: '{{ length(to_string(prev)) }}', b: r.int(1, 100) },
  });
  const transform = (sid, value, extra = {}) => ({ id: sid, kind: 'transform', ...extra, value });

  /** One pipeline step reading `prev` (it has exactly one dependency) and maybe an earlier step. */
  const chainStep = (after, ancestors) => {
    const extra = after ? { after: [after] } : {};
    const older = ancestors.length > 2 && r.next() < 0.5 ? r.pick(ancestors.slice(0, -1)) : null;
    const roll = r.next();
    if (roll < 0.45) {
      const sid = id('echo');
      return echo(sid, older ? `${r.pick(WORDS)} from {{ ${older} }} then {{ prev }}` : `${r.pick(WORDS)}: {{ prev }}`, extra);
    }
    if (roll < 0.65) return add(id('count'), extra);
    const sid = id('shape');
    const value = { kind: r.pick(WORDS), input: '{{ prev }}', run: '{{ run.id }}' };
    if (older) value.earlier = `{{ ${older} }}`;
    return transform(sid, value, extra);
  };

  const start = transform('start', { items: '{{ inputs.items }}', label: '{{ inputs.label }}' });
  top.push(start);
  used += 1;

  const phases = Math.max(1, Math.round(total / 500));
  let hub = start.id;
  for (let p = 0; p < phases; p++) {
    const phaseLeft = total - used - (phases - p); // steps this and later phases may use, their hubs set apart
    const phaseBudget = p === phases - 1 ? phaseLeft : Math.floor(phaseLeft / (phases - p));
    const lanes = Math.max(1, Math.min(24, Math.round(Math.sqrt(phaseBudget) / 1.4)));
    const tails = [];
    for (let l = 0; l < lanes; l++) {
      let budget = Math.floor(phaseBudget / lanes) + (l < phaseBudget % lanes ? 1 : 0);
      if (budget === 0) continue;
      // `tail` is the last step of the lane so far (the next step's implicit dependency);
      // `ancestors` are the lane's steps every later step of the lane runs after.
      let tail = hub;
      let first = true;
      const ancestors = [hub];
      // The first step of a lane names the hub in `after`; later ones follow the list.
      const afterFirst = () => {
        const a = first ? tail : null;
        first = false;
        return a;
      };
      while (budget > 0) {
        const roll = r.next();
        if (roll < 0.2 && budget >= 5) {
          // Fan-out / fan-in: 2–4 branches of 1–2 steps after `tail`, rejoined.
          const source = tail;
          first = false;
          let branches = r.int(2, 4);
          while (branches > 2 && branches * 1 + 1 > budget) branches--;
          const ends = [];
          let left = budget - 1;
          for (let b = 0; b < branches && left > 0; b++) {
            const len = Math.min(left - (branches - b - 1), r.int(1, 2));
            if (len <= 0) break;
            for (let k = 0; k < len; k++) {
              const step = chainStep(k === 0 ? source : null, ancestors);
              top.push(step);
              ends[b] = step.id;
            }
            left -= len;
          }
          const join = transform(id('join'), {
            parts: ends.map((e) => `{{ ${e} }}`),
            statuses: Object.fromEntries(ends.map((e) => [e, `{{ steps.${e}.status }}`])),
          }, { after: ends });
          top.push(join);
          ancestors.push(...ends, join.id);
          budget = left; // what the branches and the join left
          tail = join.id;
          continue;
        }
        if (roll < 0.32 && budget >= 5) {
          // Switch diamond: route on the previous output; three targets; a rejoin.
          const sw = {
            id: id('route'),
            kind: 'switch',
            ...(first ? { after: [tail] } : {}),
            cases: [
              { when: '{{ length(to_string(prev)) > `40` }}', to: [] },
              { when: `{{ contains(to_string(prev), '${r.pick(WORDS)}') }}`, to: [] },
            ],
            default: [],
          };
          first = false;
          const targets = [chainStep(null, ancestors), chainStep(null, ancestors), chainStep(null, ancestors)];
          sw.cases[0].to.push(targets[0].id);
          sw.cases[1].to.push(targets[1].id);
          sw.default.push(targets[2].id);
          const join = transform(id('rejoin'), {
            branch: `{{ ${sw.id}.case }}`,
            result: `{{ ${targets.map((t) => t.id).join(' || ')} }}`,
          }, { after: targets.map((t) => t.id) });
          top.push(sw, ...targets, join);
          ancestors.push(sw.id, ...targets.map((t) => t.id), join.id);
          budget -= 5;
          tail = join.id;
          continue;
        }
        if (roll < 0.45 && budget >= 3) {
          // A loop with a body of 2–4 steps: mostly for_each, sometimes until.
          const bodyLen = Math.min(budget - 1, r.int(2, 4));
          const until = r.next() < 0.25;
          const as = !until && r.next() < 0.5 ? r.pick(['entry', 'row', 'obj']) : null;
          const loopVar = as ?? 'item';
          const outer = r.pick(ancestors);
          const body = [];
          for (let k = 0; k < bodyLen; k++) {
            if (k === 0) body.push(echo(id('each'), until ? `attempt {{ index }} of {{ ${outer} }}` : `{{ ${loopVar} }} #{{ index }}`));
            else if (k === bodyLen - 1) body.push(transform(id('mark'), { index: '{{ index }}', got: '{{ prev }}', outer: `{{ ${outer} }}` }));
            else body.push(chainStep(null, []));
          }
          const loop = {
            id: id(until ? 'poll' : 'each_loop'),
            kind: 'loop',
            ...(first ? { after: [tail] } : {}),
            ...(until
              ? { until: '{{ index >= `2` }}', max_iterations: 5 }
              : { for_each: '{{ start.items }}', ...(as ? { as } : {}), ...(r.next() < 0.5 ? { concurrency: 4 } : {}) }),
            steps: body,
            collect: { index: '{{ index }}', last: `{{ ${body[body.length - 1].id} }}` },
          };
          first = false;
          top.push(loop);
          ancestors.push(loop.id);
          budget -= 1 + bodyLen;
          tail = loop.id;
          continue;
        }
        if (roll < 0.52 && budget >= 2) {
          // A retried tool step with a fallback that stands in when it fails.
          const fb = transform(id('fallback'), { failed: '{{ error.step }}', message: '{{ error.message }}' });
          const step = echo(id('call'), `retry me: {{ prev }}`, {
            ...(first ? { after: [tail] } : {}),
            retry: { attempts: 3, delay_ms: 100, backoff: 'exponential' },
            fallback: fb.id,
          });
          first = false;
          top.push(step, fb);
          ancestors.push(step.id);
          budget -= 2;
          tail = step.id;
          continue;
        }
        // A pipeline of 1–6 steps.
        const len = Math.min(budget, r.int(1, 6));
        for (let k = 0; k < len; k++) {
          const step = chainStep(afterFirst(), ancestors);
          top.push(step);
          ancestors.push(step.id);
          tail = step.id;
        }
        budget -= len;
      }
      if (tail !== hub) tails.push(tail);
    }
    const next = transform(id('hub'), {
      phase: p + 1,
      lanes: tails.length,
      results: tails.map((t) => `{{ ${t} }}`),
    }, { after: tails.length ? tails : [hub] });
    top.push(next);
    hub = next.id;
    used = count(top);
  }
  if (count(top) !== total) throw new Error(`generated ${count(top)} steps, wanted ${total}`);

  const doc = {
    blueprint: 1,
    id: `generated-${total}`,
    name: `Generated blueprint (${total} steps)`,
    description: `Generated by scripts/gen-blueprint.mjs --steps ${total} --seed ${seed}: lanes of pipelines, fan-out/fan-in, switches, loops and fallbacks against the echo fixture server.`,
    inputs: {
      type: 'object',
      properties: {
        items: { type: 'array', items: { type: 'string' }, default: ['alpha', 'beta', 'gamma'] },
        label: { type: 'string', default: 'perf' },
      },
    },
    limits: { max_step_runs: 100000, concurrency: 16 },
    steps: top,
    output: `{{ ${hub} }}`,
  };
  if (layout) doc.layout = layoutOf(top);
  return doc;
}

function count(steps) {
  let n = 0;
  for (const s of steps) n += 1 + (s.kind === 'loop' ? count(s.steps) : 0);
  return n;
}

function sizeOf(step) {
  if (step.kind === 'loop') {
    const n = step.steps.length;
    return {
      width: 2 * LOOP_PADDING + n * NODE_WIDTH + (n - 1) * GAP_X,
      height: LOOP_HEADER + NODE_HEIGHT + LOOP_PADDING,
    };
  }
  if (step.kind === 'switch') {
    const cases = step.cases.length;
    return { width: NODE_WIDTH, height: NODE_HEIGHT + (cases + 1) * CASE_ROW_HEIGHT };
  }
  return { width: NODE_WIDTH, height: NODE_HEIGHT };
}

/** Columns by dependency depth (stacked in list order); loop bodies in a row inside their loop. */
function layoutOf(top) {
  const out = {};
  const fallbacks = new Set(top.filter((s) => s.fallback).map((s) => s.fallback));
  const switchOf = new Map();
  for (const s of top) if (s.kind === 'switch') for (const t of [...s.cases.flatMap((c) => c.to), ...s.default]) switchOf.set(t, s.id);
  const fallbackOf = new Map(top.filter((s) => s.fallback).map((s) => [s.fallback, s.id]));
  const depth = new Map();
  let previous = null;
  for (const s of top) {
    let parents;
    if (fallbackOf.has(s.id)) parents = [fallbackOf.get(s.id)];
    else if (s.after) parents = s.after;
    else if (switchOf.has(s.id)) parents = [switchOf.get(s.id)];
    else parents = previous ? [previous] : [];
    const d = fallbackOf.has(s.id) ? depth.get(parents[0]) : Math.max(-1, ...parents.map((p) => depth.get(p))) + 1;
    depth.set(s.id, d);
    if (!fallbacks.has(s.id)) previous = s.id;
  }
  const columns = [];
  for (const s of top) (columns[depth.get(s.id)] ??= []).push(s);
  let x = 0;
  for (const col of columns) {
    if (!col) continue;
    let y = 0;
    let width = 0;
    for (const s of col) {
      const size = sizeOf(s);
      out[s.id] = s.kind === 'loop' ? { x, y, ...size } : { x, y };
      if (s.kind === 'loop') {
        s.steps.forEach((b, i) => {
          out[b.id] = { x: LOOP_PADDING + i * (NODE_WIDTH + GAP_X), y: LOOP_HEADER };
        });
      }
      y += size.height + GAP_Y;
      width = Math.max(width, size.width);
    }
    x += width + GAP_X;
  }
  return out;
}

function main(argv) {
  const opts = { steps: 1000, layout: false, seed: 1 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--steps') opts.steps = Number(argv[++i]);
    else if (a === '--seed') opts.seed = Number(argv[++i]);
    else if (a === '--layout') opts.layout = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: node scripts/gen-blueprint.mjs --steps N [--layout] [--seed S] > file.json\n');
      return 0;
    } else {
      process.stderr.write(`unknown argument: ${a}\n`);
      return 2;
    }
  }
  try {
    // A reader that stops early (`| head`) is not an error.
    process.stdout.on('error', (e) => process.exit(e.code === 'EPIPE' ? 0 : 1));
    process.stdout.write(JSON.stringify(generateBlueprint(opts), null, 2) + '\n');
    return 0;
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    return 2;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2));
}
