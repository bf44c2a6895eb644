import { describe, expect, it } from 'vitest';
import type { Blueprint, Step } from '../doc/types';
import { example } from '../testing/examples';
import { cycleDiagnosticsKey } from '../doc/cycle';
import { docToGraph, sameNode } from './doc-to-graph';
import type { FlowEdge } from './types';

const load = (name: string) => JSON.parse(example(name)) as Blueprint;
const edgeIds = (edges: FlowEdge[]) => edges.map((e) => e.id).sort();

describe('docToGraph', () => {
  it('makes one node per step, typed by kind', () => {
    const g = docToGraph(load('everything-tour'));
    expect(g.nodes.map((n) => [n.id, n.type])).toEqual([
      ['architecture', 'resource'],
      ['dynamic', 'resource'],
      ['simple', 'prompt'],
      ['question', 'prompt'],
      ['settle', 'wait'],
      ['digest', 'transform'],
      ['reply', 'tool'],
    ]);
  });

  it("draws an `input` step as node type `ask`, never React Flow's styled built-in `input`", () => {
    const doc = { blueprint: 1, id: 'x', steps: [{ id: 'gate', kind: 'input', prompt: 'Go?', approve: true }] } as Blueprint;
    expect(docToGraph(doc).nodes.map((n) => n.type)).toEqual(['ask']);
  });

  it('draws explicit and implicit `after` edges, marking the implicit ones', () => {
    const g = docToGraph(load('everything-tour'));
    expect(edgeIds(g.edges)).toEqual(
      [
        'after:architecture->settle',
        'after:dynamic->settle',
        'after:simple->settle',
        'after:question->settle',
        'after:settle->digest',
        'after:digest->reply',
      ].sort(),
    );
    const implicit = g.edges.filter((e) => e.data?.kind === 'after' && e.data.implicit).map((e) => e.id);
    expect(implicit.sort()).toEqual(['after:digest->reply', 'after:settle->digest']);
    const settle = g.edges.find((e) => e.id === 'after:architecture->settle')!;
    expect(settle).toMatchObject({ source: 'architecture', target: 'settle', sourceHandle: 'out', targetHandle: 'in' });
  });

  it('draws implicit edges with their own edge type, distinct from written `after` and fallback edges', () => {
    const g = docToGraph(load('everything-tour'));
    const implicit = g.edges.find((e) => e.id === 'after:settle->digest')!;
    const explicit = g.edges.find((e) => e.id === 'after:architecture->settle')!;
    expect(implicit.type).toBe('implicit');
    expect(implicit.className).toContain('edge-implicit');
    expect(explicit.type).toBe('routed');
    expect(explicit.className).not.toContain('edge-implicit');
    // The implicit arrowhead is smaller and grey, not the written edge's.
    expect(implicit.markerEnd).not.toEqual(explicit.markerEnd);
    const fb = docToGraph(load('retry-fallback')).edges.find((e) => e.data?.kind === 'fallback')!;
    expect(fb.type).not.toBe('implicit');
    expect(fb.label).toBe('fallback');
  });

  it('marks the edge a DEPENDENCY_CYCLE diagnostic points at (`/steps/N/after/M`) in red', () => {
    const doc: Blueprint = {
      blueprint: 1,
      id: 'c',
      steps: [
        { id: 'a', kind: 'wait', ms: 1, after: ['c'] },
        { id: 'b', kind: 'wait', ms: 1, after: ['a'] },
        { id: 'c', kind: 'wait', ms: 1, after: ['x', 'b'] },
        { id: 'x', kind: 'wait', ms: 1, after: [] },
      ],
    };
    const d = { level: 'error' as const, code: 'DEPENDENCY_CYCLE', message: 'dependency cycle', pointer: '/steps/2/after/1', step: 'c' };
    const red = (g: ReturnType<typeof docToGraph>) => g.edges.filter((e) => e.className?.includes('edge-cycle')).map((e) => e.id).sort();
    expect(red(docToGraph(doc))).toEqual([]);
    expect(red(docToGraph(doc, { diagnostics: [d] }))).toEqual(['after:b->c']);
    // A pointer at the step only (older validators): every edge of the cycle through it.
    expect(red(docToGraph(doc, { diagnostics: [{ ...d, pointer: '/steps/0' }] }))).toEqual(['after:a->b', 'after:b->c', 'after:c->a']);
    // Other diagnostics mark nothing.
    expect(red(docToGraph(doc, { diagnostics: [{ ...d, code: 'UNKNOWN_STEP' }] }))).toEqual([]);
  });

  it('keys only the cycle diagnostics (others do not make the canvas derive the graph again)', () => {
    const cyc = { level: 'error' as const, code: 'DEPENDENCY_CYCLE', message: 'c', pointer: '/steps/1/after/0' };
    const other = { level: 'warning' as const, code: 'UNUSED_INPUT', message: 'u', pointer: '/inputs' };
    expect(cycleDiagnosticsKey([other])).toBe('');
    expect(cycleDiagnosticsKey([other, cyc])).toBe(cycleDiagnosticsKey([cyc]));
    expect(cycleDiagnosticsKey([cyc])).not.toBe(cycleDiagnosticsKey([{ ...cyc, pointer: '/steps/2/after/0' }]));
  });

  it('finds a cycle inside a loop body and through a switch case', () => {
    const doc: Blueprint = {
      blueprint: 1,
      id: 'c',
      steps: [
        { id: 'start', kind: 'wait', ms: 1 },
        {
          id: 'each',
          kind: 'loop',
          for_each: '{{ start }}',
          steps: [
            { id: 'sw', kind: 'switch', after: ['t'], cases: [{ when: '{{ item }}', to: ['t'] }], default: [] },
            { id: 't', kind: 'wait', ms: 1 },
          ],
        },
      ],
    };
    const d = { level: 'error' as const, code: 'DEPENDENCY_CYCLE', message: 'cycle', pointer: '/steps/1/steps/0/after/0' };
    const g = docToGraph(doc, { diagnostics: [d] });
    expect(g.edges.filter((e) => e.className?.includes('edge-cycle')).map((e) => e.id)).toEqual(['after:t->sw']);
    const all = docToGraph(doc, { diagnostics: [{ ...d, pointer: '/steps/1/steps/0' }] });
    expect(all.edges.filter((e) => e.className?.includes('edge-cycle')).map((e) => e.id).sort()).toEqual(['after:t->sw', 'case:sw:0->t']);
  });

  it('puts loop bodies in their container with parentId, loops before their children', () => {
    const g = docToGraph(load('loop-collect'));
    const ids = g.nodes.map((n) => n.id);
    const say = g.nodes.find((n) => n.id === 'say')!;
    const loop = g.nodes.find((n) => n.id === 'each_message')!;
    expect(loop.type).toBe('loop');
    expect(say.parentId).toBe('each_message');
    expect(g.nodes.find((n) => n.id === 'measure')!.parentId).toBe('each_message');
    expect(g.nodes.find((n) => n.id === 'batch')!.parentId).toBeUndefined();
    expect(ids.indexOf('each_message')).toBeLessThan(ids.indexOf('say'));
    // The container holds its body.
    expect(loop.width).toBeGreaterThanOrEqual(say.position.x + 240);
    expect(loop.height).toBeGreaterThan(say.position.y);
    // Inside the body: the first step starts with the iteration, the second follows it.
    expect(edgeIds(g.edges)).toEqual(['after:batch->each_message', 'after:each_message->report', 'after:say->measure']);
  });

  it('nests loops inside loops', () => {
    const g = docToGraph(load('cmdb-sync'));
    const pod = g.nodes.find((n) => n.id === 'create_pod')!;
    expect(pod.parentId).toBe('upsert_pods');
    expect(g.nodes.find((n) => n.id === 'upsert_pods')!.parentId).toBe('pods_by_ns');
  });

  it('gives a switch one edge per case target from its case handle, and no implicit edge to targets', () => {
    const g = docToGraph(load('switch-diamond'));
    const cases = g.edges.filter((e) => e.data?.kind === 'case');
    expect(cases.map((e) => [e.id, e.sourceHandle])).toEqual([
      ['case:route:0->wet', 'case-0'],
      ['case:route:1->hot', 'case-1'],
      ['case:route:default->mild', 'default'],
    ]);
    expect(g.edges.some((e) => e.id === 'after:wet->hot' || e.id === 'after:hot->mild')).toBe(false);
    expect(g.edges.some((e) => e.id === 'after:measure->route')).toBe(true);
    expect(g.nodes.find((n) => n.id === 'hot')!.data.switchFrom).toBe('route');
  });

  it('draws fallbacks dashed from the step, and gives a fallback step no dependency edges', () => {
    const g = docToGraph(load('retry-fallback'));
    const fb = g.edges.find((e) => e.data?.kind === 'fallback')!;
    expect(fb).toMatchObject({ id: 'fallback:slow->slow_fallback', source: 'slow', target: 'slow_fallback', sourceHandle: 'fallback' });
    expect(fb.style?.strokeDasharray).toBeTruthy();
    expect(g.edges.filter((e) => e.target === 'slow_fallback')).toEqual([fb]);
    expect(g.nodes.find((n) => n.id === 'slow_fallback')!.data.fallbackOf).toBe('slow');
  });

  it('passes fallback steps over in the implicit order', () => {
    const doc: Blueprint = {
      blueprint: 1,
      id: 't',
      steps: [
        { id: 'a', kind: 'wait', ms: 1, fallback: 'f' },
        { id: 'f', kind: 'wait', ms: 1 },
        { id: 'b', kind: 'wait', ms: 1 },
      ],
    };
    expect(edgeIds(docToGraph(doc).edges)).toEqual(['after:a->b', 'fallback:a->f']);
  });

  it('places steps without layout deterministically, by dependency depth', () => {
    const doc = load('fan-out-fan-in');
    const a = docToGraph(doc).nodes;
    const b = docToGraph(structuredClone(doc)).nodes;
    expect(a.map((n) => n.position)).toEqual(b.map((n) => n.position));
    const pos = Object.fromEntries(a.map((n) => [n.id, n.position]));
    expect(pos.new_york!.x).toBe(pos.chicago!.x);
    expect(pos.chicago!.y).toBeGreaterThan(pos.new_york!.y);
    expect(pos.readings!.x).toBeGreaterThan(pos.new_york!.x);
    expect(pos.extremes!.x).toBeGreaterThan(pos.readings!.x);
  });

  it('keeps node content equal for unchanged steps across an edit elsewhere', () => {
    const doc = load('pipeline-prev');
    const before = docToGraph(doc).nodes;
    const edited: Blueprint = { ...doc, steps: doc.steps.map((s) => (s.id === 'shout' ? { ...s, note: 'x' } : s)) };
    const after = docToGraph(edited).nodes;
    expect(before.map((n, i) => sameNode(n, after[i]!))).toEqual([true, true, true, true, false]);
  });

  it('does not draw edges to steps that do not exist', () => {
    const doc: Blueprint = { blueprint: 1, id: 't', steps: [{ id: 'a', kind: 'wait', ms: 1, after: ['ghost'] }] };
    expect(docToGraph(doc).edges).toEqual([]);
  });

  it('maps a 1,000-step blueprint, loops and all', () => {
    const steps: Step[] = [];
    for (let i = 0; i < 700; i++) {
      steps.push({
        id: `s${i}`,
        kind: 'tool',
        server: 'srv',
        tool: 'echo',
        args: { message: `{{ prev }} ${i}` },
        ...(i % 10 === 0 && i > 0 ? { after: [`s${i - 1}`, `s${i - 5}`] } : {}),
      });
    }
    for (let l = 0; l < 30; l++) {
      const body: Step[] = [];
      for (let k = 0; k < 9; k++) body.push({ id: `l${l}_b${k}`, kind: 'transform', value: `{{ item }} ${k}` });
      steps.push({ id: `loop${l}`, kind: 'loop', for_each: '{{ s1 }}', steps: body });
    }
    const doc: Blueprint = { blueprint: 1, id: 'big', steps };
    const total = 700 + 30 * 10;
    expect(docToGraph(doc).nodes).toHaveLength(total);
    // How fast: `npm run ui:bench` (ui/src/ui.bench.ts).
  });
});
