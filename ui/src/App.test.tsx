// @vitest-environment jsdom
// A smoke test of the mounted studio: the canvas renders the document with the
// test hooks the end-to-end tests rely on, store edits reach the canvas, and the
// diagnostics list selects nodes. (Gestures are covered by the desktop e2e tests.)

import { useReactFlow, useStoreApi, type ReactFlowInstance } from '@xyflow/react';
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { App } from './App';
import { findStep, locateStep } from './doc/query';
import { docStore } from './doc/store';
import { isFree, obstaclesIn } from './doc/placement';
import type { FlowEdge, FlowNode } from './graph/types';
import type { Blueprint } from './doc/types';
import { example } from './testing/examples';
import { installLayoutStubs } from './testing/jsdom';

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
const q = (sel: string) => host.querySelector(sel);
const qa = (sel: string) => [...host.querySelectorAll(sel)];

beforeEach(() => {
  host = document.createElement('div');
  host.style.width = '1200px';
  host.style.height = '800px';
  document.body.appendChild(host);
  root = createRoot(host);
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
});

describe('App', () => {
  it('renders every step with its test hooks, loops holding their body', async () => {
    docStore.getState().load(JSON.parse(example('loop-collect')) as Blueprint);
    await act(async () => root.render(<App />));
    for (const id of ['batch', 'each_message', 'say', 'measure', 'report']) {
      expect(q(`[data-testid="step-${id}"]`), id).not.toBeNull();
    }
    expect(q('[data-testid="handle-batch-in"]')).not.toBeNull();
    expect(q('[data-testid="handle-batch-out"]')).not.toBeNull();
    expect(q('[data-testid="handle-batch-fallback"]')).not.toBeNull();
    // The body node sits inside the loop: React Flow renders it after its parent.
    expect(q('[data-testid="step-each_message"]')!.textContent).toContain('for each');
    expect(q('[data-testid="step-say"]')!.textContent).toContain('everything / echo');
    expect(q('[data-testid="diagnostics"]')).not.toBeNull();
    expect(q('[data-testid="doc-name"]')!.textContent).toBe('Loop and collect');
  });

  it('gives a switch one handle per case plus default', async () => {
    docStore.getState().load(JSON.parse(example('switch-diamond')) as Blueprint);
    await act(async () => root.render(<App />));
    expect(q('[data-testid="handle-route-case-0"]')).not.toBeNull();
    expect(q('[data-testid="handle-route-case-1"]')).not.toBeNull();
    expect(q('[data-testid="handle-route-default"]')).not.toBeNull();
    expect(q('[data-testid="handle-route-case-2"]')).toBeNull();
  });

  it('follows store edits, shows diagnostics on nodes, and selects from the list', async () => {
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint);
    await act(async () => root.render(<App />));
    expect(q('[data-testid="dirty-mark"]')).toBeNull();

    await act(async () => void docStore.getState().renameStep('greet', 'hello'));
    expect(q('[data-testid="step-greet"]')).toBeNull();
    expect(q('[data-testid="step-hello"]')).not.toBeNull();
    expect(q('[data-testid="dirty-mark"]')).not.toBeNull();

    await act(async () =>
      docStore.getState().setDiagnostics([
        { level: 'error', code: 'TEMPLATE_UNRESOLVED', message: 'no `temp`', pointer: '/steps/3/args/a', step: null, hint: null },
        { level: 'warning', code: 'TOOL_UNKNOWN', message: 'no such tool', pointer: '/steps/3/tool', step: 'sum', hint: 'did you mean get-sum?' },
      ]),
    );
    const badge = q('[data-testid="diag-sum"]')!;
    expect(badge.textContent).toContain('2');
    expect(badge.getAttribute('title')).toContain('TEMPLATE_UNRESOLVED');
    expect(q('[data-testid="diag-hello"]')).toBeNull();

    const rows = qa('[data-testid="diagnostic"]') as HTMLElement[];
    expect(rows).toHaveLength(2);
    await act(async () => rows[0]!.click());
    expect(docStore.getState().selected).toEqual(['sum']);
    expect(docStore.getState().field).toBe('/args/a');
    expect(q('[data-testid="step-sum"]')!.className).toContain('is-selected');

    await act(async () => void docStore.getState().undo());
    expect(q('[data-testid="step-greet"]')).not.toBeNull();
  });

  it('switches the theme on <html>', async () => {
    docStore.getState().load(JSON.parse(example('pipeline-prev')) as Blueprint);
    await act(async () => root.render(<App />));
    const toggle = q('[data-testid="theme-toggle"]') as HTMLElement;
    const seen = new Set<string | undefined>();
    for (let i = 0; i < 3; i++) {
      await act(async () => toggle.click());
      seen.add(document.documentElement.dataset.theme);
    }
    expect(seen).toEqual(new Set(['light', 'dark', undefined]));
  });
});

// React Flow's own store and instance, captured from inside the provider, to drive
// the canvas the way React Flow does on gestures.
let flow: { store: ReturnType<typeof useStoreApi<FlowNode, FlowEdge>>; rf: ReactFlowInstance<FlowNode, FlowEdge> };
function Probe() {
  flow = { store: useStoreApi<FlowNode, FlowEdge>(), rf: useReactFlow<FlowNode, FlowEdge>() };
  return null;
}

describe('canvas wiring', () => {
  const mount = async (name: string) => {
    docStore.getState().load(JSON.parse(example(name)) as Blueprint);
    await act(async () => root.render(<App left={<Probe />} />));
  };
  const s = () => docStore.getState();

  it('writes a drag to layout as one undo entry, at drag end', async () => {
    await mount('fan-out-fan-in');
    const { triggerNodeChanges } = flow.store.getState();
    await act(async () => {
      triggerNodeChanges([{ id: 'chicago', type: 'position', position: { x: 11, y: 12 }, dragging: true }]);
      triggerNodeChanges([{ id: 'chicago', type: 'position', position: { x: 21, y: 22 }, dragging: true }]);
    });
    expect(s().past).toHaveLength(0);
    await act(async () => {
      triggerNodeChanges([{ id: 'chicago', type: 'position', position: { x: 31.4, y: 32 }, dragging: false }]);
    });
    expect(s().past).toHaveLength(1);
    expect(s().doc.layout).toEqual({ chicago: { x: 31, y: 32 } });
    const node = flow.rf.getNode('chicago')!;
    expect(node.position).toEqual({ x: 31, y: 32 });
  });

  it('deletes edges and nodes through the document', async () => {
    await mount('fan-out-fan-in');
    await act(async () => void (await flow.rf.deleteElements({ edges: [{ id: 'after:chicago->readings' }] })));
    expect(findStep(s().doc, 'readings')!.after).toEqual(['new_york', 'los_angeles']);
    expect(flow.rf.getEdge('after:chicago->readings')).toBeUndefined();
    await act(async () => void (await flow.rf.deleteElements({ nodes: [{ id: 'extremes' }] })));
    expect(findStep(s().doc, 'extremes')).toBeUndefined();
    expect(flow.rf.getNode('extremes')).toBeUndefined();
    // An implicit edge now runs from readings to announce.
    expect(flow.rf.getEdge('after:readings->announce')?.data).toEqual({ kind: 'after', implicit: true });
    expect(s().past.map((e) => e.label)).toEqual(['Disconnect', 'Delete']);
  });

  it('connects from handles, and refuses with a notice what the format forbids', async () => {
    await mount('switch-diamond');
    const { onConnect } = flow.store.getState();
    await act(async () => onConnect?.({ source: 'route', sourceHandle: 'case-0', target: 'mild', targetHandle: 'in' }));
    expect((findStep(s().doc, 'route') as { cases: { to: string[] }[] }).cases[0]!.to).toEqual(['wet', 'mild']);
    expect(flow.rf.getEdge('case:route:0->mild')).toBeDefined();
    await act(async () => onConnect?.({ source: 'join', sourceHandle: 'out', target: 'measure', targetHandle: 'in' }));
    expect(q('[data-testid="canvas-notice"]')!.textContent).toContain('cycle');
    expect(s().past).toHaveLength(1);
  });

  it('syncs the selection both ways', async () => {
    await mount('fan-out-fan-in');
    await act(async () => flow.store.getState().addSelectedNodes(['chicago']));
    expect(s().selected).toEqual(['chicago']);
    await act(async () => s().select(['readings', 'extremes']));
    expect(flow.rf.getNodes().filter((n) => n.selected).map((n) => n.id)).toEqual(['readings', 'extremes']);
  });

  it('runs keyboard shortcuts', async () => {
    await mount('fan-out-fan-in');
    const key = (k: string, opts: KeyboardEventInit = {}) =>
      act(async () => void window.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true, ...opts })));
    await act(async () => s().select(['chicago']));
    await key('d', { ctrlKey: true });
    expect(findStep(s().doc, 'chicago_2')).toBeDefined();
    expect(s().selected).toEqual(['chicago_2']);
    await key('z', { ctrlKey: true });
    expect(findStep(s().doc, 'chicago_2')).toBeUndefined();
    await key('z', { ctrlKey: true, shiftKey: true });
    expect(findStep(s().doc, 'chicago_2')).toBeDefined();
    await key('a', { ctrlKey: true });
    expect(s().selected).toHaveLength(7);
    let saved = 0;
    await act(async () => root.render(<App left={<Probe />} onSaveShortcut={() => saved++} />));
    await key('s', { metaKey: true });
    expect(saved).toBe(1);
  });

  const dropStep = async (template: object, at: { x: number; y: number }) => {
    const pane = q('.react-flow') as HTMLElement;
    const data: Record<string, string> = { 'application/mcpflow-step': JSON.stringify(template) };
    const drop = new Event('drop', { bubbles: true, cancelable: true });
    // jsdom has no layout: the viewport is unscaled at 0,0, so client = flow coordinates.
    Object.assign(drop, { clientX: at.x, clientY: at.y });
    Object.defineProperty(drop, 'dataTransfer', {
      value: { types: Object.keys(data), getData: (t: string) => data[t] ?? '', dropEffect: 'none' },
    });
    await act(async () => void pane.dispatchEvent(drop));
  };

  it('creates a step inside the loop it is dropped onto', async () => {
    await mount('loop-collect');
    expect(flow.store.getState().transform).toEqual([0, 0, 1]);
    const loop = flow.rf.getNode('each_message')!;
    await dropStep({ kind: 'wait', ms: 5 }, { x: loop.position.x + 200, y: loop.position.y + loop.height! - 10 });
    expect(locateStep(s().doc, 'wait')!.container).toBe('each_message');
    const at = s().doc.layout!.wait!;
    expect(at.x).toBe(200 - 120);
    // That point is on top of a body card: the step is nudged off it, never on top.
    expect(at.y).toBeGreaterThan(loop.height! - 30);
    const others = obstaclesIn(s().doc.steps, 'each_message', s().doc.layout).filter((r) => r.x !== at.x || r.y !== at.y);
    expect(isFree({ x: at.x, y: at.y, width: 240, height: 110 }, others)).toBe(true);
    expect(flow.rf.getNode('wait')!.parentId).toBe('each_message');
    // Outside any loop: the top level.
    await dropStep({ kind: 'wait', ms: 5 }, { x: -500, y: -500 });
    expect(locateStep(s().doc, 'wait_2')!.container).toBeNull();
  });

  it('creates a step where a palette item is dropped', async () => {
    await mount('fan-out-fan-in');
    await dropStep({ kind: 'tool', server: 's', tool: 'get-sum', args: {} }, { x: 500, y: 300 });
    const step = findStep(s().doc, 'get_sum');
    expect(step).toMatchObject({ id: 'get_sum', kind: 'tool', server: 's', tool: 'get-sum' });
    expect(s().doc.layout?.get_sum).toBeDefined();
    expect(s().selected).toEqual(['get_sum']);
    expect(q('[data-testid="step-get_sum"]')).not.toBeNull();
  });
});
