import { describe, expect, it } from 'vitest';
import { docToGraph } from './doc-to-graph';
import { EXAMPLES, example } from '../testing/examples';
import type { NodeBounds } from '../doc/ops';
import { allStepIds } from '../doc/query';
import { serializeBlueprint } from '../doc/serialize';
import { createDocStore } from '../doc/store';
import type { Blueprint } from '../doc/types';

/** The graph's node positions (and loop sizes) for the ids given, as `moveNodes` takes them. */
function graphBounds(doc: Blueprint, ids: Iterable<string>): Record<string, NodeBounds> {
  const wanted = new Set(ids);
  const out: Record<string, NodeBounds> = {};
  for (const n of docToGraph(doc).nodes) {
    if (!wanted.has(n.id)) continue;
    const b: NodeBounds = { x: n.position.x, y: n.position.y };
    const entry = doc.layout?.[n.id];
    if (n.type === 'loop' && typeof entry?.width === 'number') b.width = n.width!;
    if (n.type === 'loop' && typeof entry?.height === 'number') b.height = n.height!;
    out[n.id] = b;
  }
  return out;
}

describe('examples round-trip', () => {
  it('finds every example', () => {
    expect(Object.keys(EXAMPLES).length).toBeGreaterThanOrEqual(11);
    expect(Object.keys(EXAMPLES)).toContain('everything-tour');
  });

  for (const [name, text] of Object.entries(EXAMPLES)) {
    it(`${name} is written back byte for byte after load → graph → moveNodes`, () => {
      const store = createDocStore();
      store.getState().load(JSON.parse(text));
      const doc = store.getState().doc;
      store.getState().moveNodes(graphBounds(doc, Object.keys(doc.layout ?? {})));
      expect(store.getState().dirty).toBe(false);
      expect(JSON.stringify(store.getState().doc)).toBe(JSON.stringify(JSON.parse(text)));
      expect(serializeBlueprint(store.getState().doc)).toBe(text);
    });
  }

  it('everything-tour carries a layout, and the graph puts nodes where it says', () => {
    const doc = JSON.parse(example('everything-tour')) as Blueprint;
    expect(Object.keys(doc.layout ?? {})).toHaveLength(7);
    const settle = docToGraph(doc).nodes.find((n) => n.id === 'settle')!;
    expect(settle.position).toEqual({ x: 320, y: 180 });
  });

  it('a moved node changes only its layout entry', () => {
    const text = example('everything-tour');
    const store = createDocStore();
    store.getState().load(JSON.parse(text));
    store.getState().moveNodes({ settle: { x: 333.4, y: 181 } });
    const expected = JSON.parse(text) as Blueprint;
    expected.layout!.settle = { x: 333, y: 181 };
    expect(serializeBlueprint(store.getState().doc)).toBe(serializeBlueprint(expected));
    expect(store.getState().dirty).toBe(true);
  });

  for (const name of ['fan-out-fan-in', 'loop-collect', 'switch-diamond']) {
    it(`writing positions into ${name} (no layout) adds only the \`layout\` key, at the end`, () => {
      const text = example(name);
      const original = JSON.parse(text) as Blueprint;
      expect(original.layout).toBeUndefined();
      const store = createDocStore();
      store.getState().load(JSON.parse(text));
      store.getState().moveNodes(graphBounds(store.getState().doc, allStepIds(original)));
      const after = store.getState().doc;
      expect(Object.keys(after)).toEqual([...Object.keys(original), 'layout']);
      const { layout, ...rest } = after;
      expect(JSON.stringify(rest)).toBe(JSON.stringify(original));
      expect(Object.keys(layout!)).toEqual(allStepIds(original));
      // Positions written are the ones drawn: reloading draws the same graph.
      const again = docToGraph(after).nodes.map((n) => [n.id, n.position]);
      expect(again).toEqual(docToGraph(original).nodes.map((n) => [n.id, n.position]));
    });
  }

  it('body positions in layout are relative to the loop', () => {
    const doc = JSON.parse(example('loop-collect')) as Blueprint;
    doc.layout = { batch: { x: 0, y: 0 }, each_message: { x: 400, y: 300 }, say: { x: 30, y: 90 } };
    const nodes = docToGraph(doc).nodes;
    const say = nodes.find((n) => n.id === 'say')!;
    expect(say.parentId).toBe('each_message');
    expect(say.position).toEqual({ x: 30, y: 90 });
  });
});
