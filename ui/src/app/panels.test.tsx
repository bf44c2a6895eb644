// @vitest-environment jsdom
// The panels in the mounted App: Ctrl+B / Ctrl+Alt+B / Ctrl+J toggle them (not while
// typing), a collapsed side panel leaves a rail that reopens it, dragging a handle
// resizes (double-click resets), the empty canvas shows its hint, and an empty
// document's "no steps" is a neutral hint in Problems, not an error.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { App } from '../App';
import { docStore } from '../doc/store';
import type { Blueprint } from '../doc/types';
import { BottomTabs } from '../panels/run/BottomTabs';
import { tid } from '../testing/dom';
import { installLayoutStubs } from '../testing/jsdom';
import { defaultLayout, LIMITS, useLayout } from '../shared/layout';

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
const L = () => useLayout.getState();
const key = (init: KeyboardEventInit, target: EventTarget = window) =>
  act(async () => void target.dispatchEvent(new KeyboardEvent('keydown', { bubbles: true, cancelable: true, ...init })));
const pointer = (el: HTMLElement, type: string, x: number, y: number) =>
  act(async () => void el.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true, clientX: x, clientY: y, button: 0 })));

const doc: Blueprint = { blueprint: 1, id: 'a', name: 'A', steps: [{ id: 's', kind: 'transform', value: 1 }] } as Blueprint;

beforeEach(async () => {
  useLayout.setState({ ...defaultLayout(), guideOpen: false, rightByUser: false, bottomByUser: false });
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
});

describe('panels', () => {
  it('toggles with Ctrl+B, Ctrl+Alt+B and Ctrl+J, but not while typing', async () => {
    docStore.getState().load(doc);
    await act(async () => root.render(<App left={<input data-testid="typing" />} right={<div>inspector</div>} bottom={<BottomTabs />} />));
    expect(tid('left-rail')).toBeNull();
    await key({ key: 'b', code: 'KeyB', ctrlKey: true });
    expect(L().left.collapsed).toBe(true);
    expect(tid('left-rail')).not.toBeNull();
    expect(tid('left-panel')!.style.display).toBe('none');
    // The rail reopens it.
    await act(async () => tid('left-rail')!.click());
    expect(L().left.collapsed).toBe(false);
    // Typing in a field: no toggle.
    await key({ key: 'b', code: 'KeyB', ctrlKey: true }, tid('typing')!);
    expect(L().left.collapsed).toBe(false);
    // The right panel starts collapsed (opens on a selection); Ctrl+Alt+B opens it.
    expect(tid('right-rail')).not.toBeNull();
    await key({ key: '∫', code: 'KeyB', ctrlKey: true, altKey: true });
    expect(L().right.collapsed).toBe(false);
    expect(tid('right-rail')).toBeNull();
    await key({ key: 'j', code: 'KeyJ', ctrlKey: true });
    expect(L().bottom.collapsed).toBe(false);
    expect(tid('bottom-panel')!.className).not.toContain('is-collapsed');
    await key({ key: 'j', code: 'KeyJ', ctrlKey: true });
    expect(L().bottom.collapsed).toBe(true);
  });

  it('resizes by dragging a handle and resets on double-click', async () => {
    docStore.getState().load(doc);
    await act(async () => root.render(<App left={<div />} right={<div />} />));
    const handle = tid('left-handle')!;
    await pointer(handle, 'pointerdown', 300, 100);
    await pointer(handle, 'pointermove', 360, 100);
    await pointer(handle, 'pointerup', 360, 100);
    expect(L().left.size).toBe(LIMITS.left.default + 60);
    expect(tid('left-panel')!.style.width).toBe(`${LIMITS.left.default + 60}px`);
    await act(async () => void handle.dispatchEvent(new MouseEvent('dblclick', { bubbles: true })));
    expect(L().left.size).toBe(LIMITS.left.default);
    // The right handle grows the panel when dragged left.
    await act(async () => L().setCollapsed('right', false));
    const right = tid('right-handle')!;
    await pointer(right, 'pointerdown', 900, 100);
    await pointer(right, 'pointermove', 860, 100);
    await pointer(right, 'pointerup', 860, 100);
    expect(L().right.size).toBe(LIMITS.right.default + 40);
  });

  it('shows the empty-canvas hint and the "no steps" hint in Problems, not an error', async () => {
    docStore.getState().load({ blueprint: 1, id: 'new', name: 'Untitled', steps: [] } as Blueprint);
    await act(async () => root.render(<App bottom={<BottomTabs />} />));
    expect(tid('empty-hint')!.textContent).toContain('Drag a tool from the palette, or double-click the canvas to add a step');
    await act(async () =>
      docStore.getState().setDiagnostics([{ level: 'error', code: 'INVALID_VALUE', message: 'the blueprint has no steps', pointer: '/steps', step: null, hint: null }]),
    );
    const row = tid('diagnostic')!;
    expect(row.dataset.level).toBe('hint');
    expect(row.className).not.toContain('diag-error');
    expect(tid('tab-problems')!.textContent).toBe('Problems');
    expect(L().bottom.collapsed).toBe(true);
    // With a step, the hint is gone (and the same diagnostic would be an error).
    await act(async () => void docStore.getState().addStep({ kind: 'transform', id: 'x', value: 1 } as never));
    expect(tid('empty-hint')).toBeNull();
  });
});
