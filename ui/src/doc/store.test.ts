import { describe, expect, it } from 'vitest';
import { example } from '../testing/examples';
import { findStep } from './query';
import { createDocStore, HISTORY_LIMIT } from './store';
import type { Blueprint, Diagnostic } from './types';

const loaded = (name: string) => {
  const store = createDocStore();
  store.getState().load(JSON.parse(example(name)) as Blueprint, { path: `${name}.json` });
  return store;
};

describe('undo and redo', () => {
  it('undoes and redoes several edits in order', () => {
    const store = loaded('pipeline-prev');
    const s = () => store.getState();
    const d0 = s().doc;
    s().patchStep('greet', { name: 'Hello' });
    const d1 = s().doc;
    s().renameStep('weather', 'forecast');
    const d2 = s().doc;
    s().moveNodes({ greet: { x: 10, y: 20 } });
    const d3 = s().doc;
    expect(s().past.map((e) => e.label)).toEqual(['Edit step', 'Rename step', 'Move']);

    expect(s().undo()).toBe(true);
    expect(s().doc).toBe(d2);
    expect(s().undo()).toBe(true);
    expect(s().doc).toBe(d1);
    expect(findStep(s().doc, 'weather')).toBeDefined();
    expect(s().undo()).toBe(true);
    expect(s().doc).toBe(d0);
    expect(s().undo()).toBe(false);

    expect(s().redo()).toBe(true);
    expect(s().doc).toBe(d1);
    expect(s().redo()).toBe(true);
    expect(s().redo()).toBe(true);
    expect(s().doc).toBe(d3);
    expect(s().redo()).toBe(false);
  });

  it('clears redo after a new edit', () => {
    const store = loaded('pipeline-prev');
    const s = () => store.getState();
    s().patchStep('greet', { name: 'A' });
    s().patchStep('greet', { name: 'B' });
    s().undo();
    expect(s().future).toHaveLength(1);
    s().patchStep('greet', { name: 'C' });
    expect(s().future).toHaveLength(0);
    expect(s().redo()).toBe(false);
    expect(findStep(s().doc, 'greet')!.name).toBe('C');
  });

  it('is dirty after an edit and clean again when undone to the saved state', () => {
    const store = loaded('pipeline-prev');
    const s = () => store.getState();
    expect(s().dirty).toBe(false);
    s().patchStep('greet', { note: 'changed' });
    expect(s().dirty).toBe(true);
    s().undo();
    expect(s().dirty).toBe(false);
    s().redo();
    expect(s().dirty).toBe(true);

    s().markSaved();
    expect(s().dirty).toBe(false);
    s().patchStep('greet', { note: 'again' });
    expect(s().dirty).toBe(true);
    s().undo();
    expect(s().dirty).toBe(false);
    s().undo();
    expect(s().dirty).toBe(true);
    expect(s().meta).toEqual({ path: 'pipeline-prev.json' });
  });

  it('does not record edits that change nothing', () => {
    const store = loaded('everything-tour');
    const s = () => store.getState();
    s().moveNodes({ settle: { x: 320, y: 180 } });
    s().patchStep('settle', { ms: 250 });
    s().removeSteps(['nope']);
    expect(s().past).toHaveLength(0);
    expect(s().dirty).toBe(false);
  });

  it('makes a batch one entry', () => {
    const store = loaded('everything-tour');
    const s = () => store.getState();
    const before = s().doc;
    s().batch('Drag', () => {
      s().moveNodes({ settle: { x: 1, y: 1 } });
      s().moveNodes({ settle: { x: 2, y: 2 } });
      s().moveNodes({ digest: { x: 3, y: 3 } });
    });
    expect(s().past).toHaveLength(1);
    expect(s().past[0]!.label).toBe('Drag');
    s().undo();
    expect(s().doc).toBe(before);
  });

  it('keeps at most HISTORY_LIMIT entries', () => {
    const store = loaded('everything-tour');
    const s = () => store.getState();
    for (let i = 0; i < HISTORY_LIMIT + 25; i++) s().moveNodes({ settle: { x: i + 1000, y: 0 } });
    expect(s().past).toHaveLength(HISTORY_LIMIT);
    let n = 0;
    while (s().undo()) n++;
    expect(n).toBe(HISTORY_LIMIT);
    expect(s().doc.layout!.settle!.x).toBe(1024);
  });

  it('reports refused edits without recording them', () => {
    const store = loaded('pipeline-prev');
    const s = () => store.getState();
    expect(s().renameStep('greet', 'weather')).toEqual({ ok: false, reason: 'a step `weather` already exists' });
    expect(s().renameStep('greet', 'prev').ok).toBe(false);
    expect(s().renameStep('greet', '9lives').ok).toBe(false);
    expect(s().connect('shout', 'greet').ok).toBe(false);
    expect(s().past).toHaveLength(0);
  });
});

describe('selection', () => {
  it('follows renames and drops removed steps', () => {
    const store = loaded('pipeline-prev');
    const s = () => store.getState();
    s().select(['greet', 'weather']);
    s().renameStep('greet', 'hello');
    expect(s().selected).toEqual(['hello', 'weather']);
    s().removeSteps(['weather']);
    expect(s().selected).toEqual(['hello']);
    s().undo();
    s().undo();
    expect(s().selected).toEqual([]);
  });

  it('selects the step and field of a diagnostic by its pointer', () => {
    const store = loaded('loop-collect');
    const s = () => store.getState();
    const d: Diagnostic = {
      level: 'error',
      code: 'TEMPLATE_UNRESOLVED',
      message: 'no such key',
      pointer: '/steps/1/steps/0/args/message',
    };
    s().setDiagnostics([d, { ...d, level: 'warning', pointer: '/steps/2', step: 'report' }, { ...d, pointer: '/inputs' }]);
    expect(s().diagnosticsByStep.say).toMatchObject({ errors: 1, warnings: 0 });
    expect(s().diagnosticsByStep.report).toMatchObject({ errors: 0, warnings: 1 });
    expect(Object.keys(s().diagnosticsByStep).sort()).toEqual(['report', 'say']);
    s().selectDiagnostic(d);
    expect(s().selected).toEqual(['say']);
    expect(s().field).toBe('/args/message');
    expect(s().reveal?.id).toBe('say');
    s().removeSteps(['each_message']);
    expect(s().diagnosticsByStep.say).toBeUndefined();
  });

  it('counts a diagnostic about another step\'s output on the producing step too', () => {
    const store = loaded('loop-collect');
    const s = () => store.getState();
    s().setDiagnostics([
      { level: 'warning', code: 'TEMPLATE_PATH_UNKNOWN', message: 'no field', pointer: '/steps/2', step: 'report', producer: 'batch' },
    ]);
    expect(s().diagnosticsByStep.report).toMatchObject({ errors: 0, warnings: 1 });
    expect(s().diagnosticsByStep.batch).toMatchObject({ errors: 0, warnings: 1 });
    expect(Object.keys(s().diagnosticsByStep).sort()).toEqual(['batch', 'report']);
  });

  it('selects everything, nested steps included', () => {
    const store = loaded('loop-collect');
    store.getState().selectAll();
    expect(store.getState().selected).toEqual(['batch', 'each_message', 'say', 'measure', 'report']);
  });
});

describe('settings', () => {
  it('sets top-level fields in place and new ones in their usual place', () => {
    const store = loaded('fan-out-fan-in');
    const s = () => store.getState();
    expect(s().setSettings({ name: 'Renamed', on_error: 'continue' }).ok).toBe(true);
    expect(Object.keys(s().doc)).toEqual([
      '$schema',
      'blueprint',
      'id',
      'name',
      'description',
      'servers',
      'on_error',
      'limits',
      'steps',
      'output',
    ]);
    expect(s().doc.name).toBe('Renamed');
    expect(s().setSettings({ output: undefined }).ok).toBe(true);
    expect('output' in s().doc).toBe(false);
    expect(s().setSettings({ steps: [] } as never).ok).toBe(false);
  });
});


describe('where an added step lands', () => {
  const fresh = () => {
    const store = createDocStore();
    store.getState().load({ blueprint: 1, id: 'n', steps: [] });
    return store;
  };

  it('lands at the drop point, and a second drop at its own point, unconnected', () => {
    const store = fresh();
    const s = () => store.getState();
    const a = s().addStep({ kind: 'wait', ms: 1 }, { container: null, position: { x: 100, y: 100 } })!;
    const b = s().addStep({ kind: 'wait', ms: 2 }, { container: null, position: { x: 500, y: 300 } })!;
    expect(s().doc.layout).toEqual({ [a]: { x: 100, y: 100 }, [b]: { x: 500, y: 300 } });
    expect(findStep(s().doc, b)!.after).toEqual([]);
  });

  it('nudges a drop on top of a card to the nearest free slot', () => {
    const store = fresh();
    const s = () => store.getState();
    s().addStep({ kind: 'wait', ms: 1 }, { container: null, position: { x: 100, y: 100 } });
    const b = s().addStep({ kind: 'wait', ms: 2 }, { container: null, position: { x: 110, y: 110 } })!;
    const p = s().doc.layout![b]!;
    // Below the first card (110 high), 20 px apart; same column.
    expect(p).toEqual({ x: 110, y: 100 + 110 + 20 });
  });

  it('from the palette (no point): next to the selected step, else at the centre of the view', () => {
    const store = fresh();
    const s = () => store.getState();
    s().setCanvasView({ center: () => ({ x: 1000, y: 800 }), sizes: () => new Map() });
    const a = s().addStep({ kind: 'wait', ms: 1 })!;
    expect(s().doc.layout![a]).toEqual({ x: 1000 - 120, y: 800 - 55 });
    s().select([a]);
    const b = s().addStep({ kind: 'wait', ms: 2 })!;
    expect(s().doc.layout![b]).toEqual({ x: 880 + 240 + 80, y: 745 });
    s().select([a]);
    const c = s().addStep({ kind: 'wait', ms: 3 })!;
    expect(s().doc.layout![c]).toEqual({ x: 880, y: 745 + 110 + 40 });
    for (const id of [a, b, c]) expect(findStep(s().doc, id)!.after ?? []).toEqual([]);
    s().setCanvasView(null);
  });

  it('next to a selected step inside a loop goes into that loop', () => {
    const store = loaded('loop-collect');
    const s = () => store.getState();
    s().select(['say']);
    const id = s().addStep({ kind: 'transform', value: 1 })!;
    const loop = findStep(s().doc, 'each_message') as { steps: { id: string }[] };
    expect(loop.steps.map((x) => x.id)).toContain(id);
    expect(findStep(s().doc, id)!.after).toEqual([]);
  });
});

describe('a dependency cycle names its edge', () => {
  it('clicking the diagnostic selects the step and the edge', () => {
    const store = createDocStore();
    store.getState().load({
      blueprint: 1,
      id: 'c',
      steps: [
        { id: 'a', kind: 'wait', ms: 1, after: ['b'] },
        { id: 'b', kind: 'wait', ms: 1, after: ['a'] },
      ],
    });
    const s = () => store.getState();
    expect(s().selectedEdge).toBeNull();
    s().selectDiagnostic({ level: 'error', code: 'DEPENDENCY_CYCLE', message: 'cycle', pointer: '/steps/1/after/0', step: 'b' });
    expect(s().selected).toEqual(['b']);
    expect(s().selectedEdge?.id).toBe('after:a->b');
    s().selectDiagnostic({ level: 'error', code: 'UNKNOWN_STEP', message: 'x', pointer: '/steps/0' });
    expect(s().selectedEdge).toBeNull();
  });
});

describe('measured cards', () => {
  it('nudges a new step just off a card as big as it was measured, not as estimated', () => {
    const store = createDocStore();
    store.getState().load({ blueprint: 1, id: 'n', steps: [] });
    const s = () => store.getState();
    const a = s().addStep({ kind: 'wait', ms: 1 }, { container: null, position: { x: 0, y: 0 } })!;
    s().setCanvasView({ center: () => null, sizes: () => new Map([[a, { width: 240, height: 50 }]]) });
    const b = s().addStep({ kind: 'wait', ms: 1 }, { container: null, position: { x: 0, y: 10 } })!;
    expect(s().doc.layout![b]).toEqual({ x: 0, y: 50 + 20 });
    s().setCanvasView(null);
  });
});

describe('read-only', () => {
  it('refuses every edit, undo and redo until allowed again or another document is loaded', () => {
    const store = loaded('loop-collect');
    const s = () => store.getState();
    s().setSettings({ name: 'Before' });
    const doc = s().doc;
    s().setReadOnly(true);
    expect(s().setSettings({ name: 'During' })).toEqual({ ok: false, reason: expect.stringMatching(/past run/) });
    expect(s().addStep({ kind: 'wait', ms: 1 } as never)).toBeNull();
    s().moveNodes({ batch: { x: 5, y: 5 } });
    expect(s().undo()).toBe(false);
    expect(s().doc).toBe(doc);
    s().setReadOnly(false);
    expect(s().setSettings({ name: 'After' }).ok).toBe(true);
    s().setReadOnly(true);
    s().load(doc);
    expect(s().readOnly).toBe(false);
  });
});
