// The context menus' actions (menu-actions.ts) on the real doc store: which items each
// menu has, when they are disabled and why, and that choosing each makes the edit it
// names (or calls the view command / re-run it names).

import { beforeEach, describe, expect, it, vi } from 'vitest';
import { findStep } from '../doc/query';
import { docStore } from '../doc/store';
import type { Blueprint } from '../doc/types';
import type { FlowEdge } from '../graph/types';
import { canvasMenu, edgeMenu, nodeMenu, type MenuEnv, type MenuItem } from './menu-actions';

const doc = (): Blueprint =>
  ({
    blueprint: 1,
    id: 'menus',
    steps: [
      { id: 'a', kind: 'transform', value: 1 },
      { id: 'b', kind: 'transform', value: 2, after: ['a'] },
      { id: 'c', kind: 'transform', value: 3, after: ['b'] },
    ],
  }) as unknown as Blueprint;

function env(): MenuEnv & { [K in keyof MenuEnv]: ReturnType<typeof vi.fn> } {
  return {
    positions: vi.fn(() => ({ a: { x: 0, y: 0 }, b: { x: 300, y: 0 }, c: { x: 600, y: 0 } })),
    fitView: vi.fn(),
    autoLayout: vi.fn(),
    quickAdd: vi.fn(),
    paste: vi.fn(),
    rename: vi.fn(),
    toggleBreakpoint: vi.fn(),
    startRun: vi.fn(),
  } as never;
}

const item = (items: MenuItem[], id: string) => {
  const it = items.find((i) => i.id === id);
  if (!it) throw new Error(`no item ${id} in ${items.map((i) => i.id).join(', ')}`);
  return it;
};
const s = () => docStore.getState();
const ids = () => s().doc.steps.map((st) => st.id);

beforeEach(() => s().load(doc()));

describe('node menu', () => {
  it('offers the node-editor actions in order', () => {
    const items = nodeMenu({ ids: ['b'], runId: null, running: false, breakpoints: [] }, env());
    expect(items.map((i) => i.id)).toEqual(['rename', 'duplicate', 'delete', 'breakpoint', 'run-step', 'run-from-here', 'disable']);
  });

  it('rename asks the canvas to rename that step', () => {
    const e = env();
    item(nodeMenu({ ids: ['b'], runId: null, running: false, breakpoints: [] }, e), 'rename').run();
    expect(e.rename).toHaveBeenCalledWith('b');
  });

  it('duplicate adds a copy; delete removes the step (one undo entry each)', () => {
    const e = env();
    item(nodeMenu({ ids: ['b'], runId: null, running: false, breakpoints: [] }, e), 'duplicate').run();
    expect(ids()).toHaveLength(4);
    expect(e.positions).toHaveBeenCalled();
    item(nodeMenu({ ids: ['b'], runId: null, running: false, breakpoints: [] }, e), 'delete').run();
    expect(ids()).not.toContain('b');
    // c's `after` no longer names the deleted step.
    expect(findStep(s().doc, 'c')?.after ?? []).not.toContain('b');
    expect(s().past.map((p) => p.label).slice(-2)).toHaveLength(2);
  });

  it('over a multi-selection acts on every selected step', () => {
    const e = env();
    const items = nodeMenu({ ids: ['a', 'c'], runId: 'r1', running: false, breakpoints: [] }, e);
    expect(item(items, 'delete').label).toBe('Delete (2 steps)');
    expect(item(items, 'rename').disabled).toBe(true);
    expect(item(items, 'run-step').disabled).toBe(true);
    item(items, 'disable').run();
    expect((findStep(s().doc, 'a') as { disabled?: boolean }).disabled).toBe(true);
    expect((findStep(s().doc, 'c') as { disabled?: boolean }).disabled).toBe(true);
    expect((findStep(s().doc, 'b') as { disabled?: boolean }).disabled).toBeUndefined();
    expect(s().past.at(-1)?.label).toBe('Disable');
    item(nodeMenu({ ids: ['a', 'c'], runId: null, running: false, breakpoints: [] }, e), 'delete').run();
    expect(ids()).toEqual(['b']);
  });

  it('disable writes "disabled": true; enable removes the key', () => {
    const e = env();
    const first = nodeMenu({ ids: ['b'], runId: null, running: false, breakpoints: [] }, e);
    expect(item(first, 'disable').label).toBe('Disable');
    item(first, 'disable').run();
    expect((findStep(s().doc, 'b') as { disabled?: boolean }).disabled).toBe(true);
    const again = nodeMenu({ ids: ['b'], runId: null, running: false, breakpoints: [] }, e);
    expect(item(again, 'disable').label).toBe('Enable');
    item(again, 'disable').run();
    expect('disabled' in findStep(s().doc, 'b')!).toBe(false);
  });

  it('toggles breakpoints: sets where missing, removes when all have one', () => {
    const e = env();
    const set = nodeMenu({ ids: ['a', 'b'], runId: null, running: false, breakpoints: ['a'] }, e);
    expect(item(set, 'breakpoint').label).toBe('Set breakpoint');
    item(set, 'breakpoint').run();
    expect(e.toggleBreakpoint.mock.calls).toEqual([['b']]);
    const clear = nodeMenu({ ids: ['a', 'b'], runId: null, running: false, breakpoints: ['a', 'b'] }, env());
    expect(item(clear, 'breakpoint').label).toBe('Remove breakpoint');
  });

  it('run this step / run from here need a last run and no run in flight', () => {
    const none = nodeMenu({ ids: ['b'], runId: null, running: false, breakpoints: [] }, env());
    expect(item(none, 'run-step').disabled).toBe(true);
    expect(item(none, 'run-from-here').disabled).toBe(true);
    expect(item(none, 'run-from-here').title).toMatch(/run the blueprint once first/i);
    const busy = nodeMenu({ ids: ['b'], runId: 'r1', running: true, breakpoints: [] }, env());
    expect(item(busy, 'run-from-here').disabled).toBe(true);
    expect(item(busy, 'run-from-here').title).toMatch(/in progress/);

    const e = env();
    const ready = nodeMenu({ ids: ['b'], runId: 'r1', running: false, breakpoints: [] }, e);
    expect(item(ready, 'run-step').disabled).toBe(false);
    item(ready, 'run-from-here').run();
    item(ready, 'run-step').run();
    expect(e.startRun.mock.calls).toEqual([
      [{ debug: false, rerun: { runId: 'r1', step: 'b', mode: 'from_here' } }],
      [{ debug: false, rerun: { runId: 'r1', step: 'b', mode: 'step' } }],
    ]);
  });
});

describe('edge menu', () => {
  it('deletes a written edge', () => {
    const edge = { source: 'a', target: 'b', sourceHandle: 'out', data: { kind: 'after', implicit: false } } as FlowEdge;
    const items = edgeMenu(edge);
    expect(items.map((i) => i.id)).toEqual(['delete-edge']);
    item(items, 'delete-edge').run();
    expect(findStep(s().doc, 'b')?.after ?? []).toEqual([]);
    expect(findStep(s().doc, 'c')?.after).toEqual(['b']);
  });

  it('leaves an implicit edge to its own click (disabled, says why)', () => {
    const edge = { source: 'a', target: 'b', sourceHandle: 'out', data: { kind: 'after', implicit: true } } as FlowEdge;
    const del = item(edgeMenu(edge), 'delete-edge');
    expect(del.disabled).toBe(true);
    expect(del.title).toMatch(/order of the steps/);
  });
});

describe('canvas menu', () => {
  it('adds a step here, pastes, lays out and fits through the view', () => {
    const e = env();
    const items = canvasMenu(e);
    expect(items.map((i) => i.id)).toEqual(['add-step', 'paste', 'auto-layout', 'fit']);
    item(items, 'add-step').run();
    item(items, 'auto-layout').run();
    item(items, 'fit').run();
    expect(e.quickAdd).toHaveBeenCalledTimes(1);
    expect(e.autoLayout).toHaveBeenCalledTimes(1);
    expect(e.fitView).toHaveBeenCalledTimes(1);
  });

  it('paste is disabled until something was copied', () => {
    expect(item(canvasMenu(env()), 'paste').disabled).toBe(true);
    s().copy(['a']);
    const e = env();
    const paste = item(canvasMenu(e), 'paste');
    expect(paste.disabled).toBe(false);
    paste.run();
    expect(e.paste).toHaveBeenCalledTimes(1);
  });

  it('layout and fit are disabled on an empty blueprint', () => {
    s().load({ blueprint: 1, id: 'empty', steps: [] } as unknown as Blueprint);
    const items = canvasMenu(env());
    expect(item(items, 'auto-layout').disabled).toBe(true);
    expect(item(items, 'fit').disabled).toBe(true);
    expect(item(items, 'add-step').disabled).toBeFalsy();
  });
});
