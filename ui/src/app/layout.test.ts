// The layout store: sizes clamped to their bounds and to the window, toggles and the
// panels that open by themselves (inspector on a selection, bottom panel for a run or
// new errors, an explicit collapse respected), and the round trip through a backend
// (debounced saves, a restart reading them back, the first-start guide once).

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { docStore } from '../doc/store';
import type { Blueprint } from '../doc/types';
import { showTab, useBottomTab } from '../panels/run/tabs';
import { followDocForPanels } from './auto';
import {
  CANVAS_MIN_SHARE,
  HANDLE,
  LIMITS,
  RAIL,
  SAVE_DELAY_MS,
  clampSize,
  defaultLayout,
  fitToWindow,
  fromStored,
  startLayout,
  useLayout,
} from '../shared/layout';
import { memoryLayoutBackend } from './ui-state';

const L = () => useLayout.getState();
const reset = () => useLayout.setState({ ...defaultLayout(), guideOpen: false, rightByUser: false, bottomByUser: false, loaded: false });

beforeEach(reset);
afterEach(() => vi.useRealTimers());

describe('sizes', () => {
  it('clamps every size to its bounds (and junk to the default)', () => {
    expect(clampSize('left', 10)).toBe(LIMITS.left.min);
    expect(clampSize('left', 5000)).toBe(LIMITS.left.max);
    expect(clampSize('right', 300.4)).toBe(300);
    expect(clampSize('bottom', Number.NaN)).toBe(LIMITS.bottom.default);
    L().setSize('left', 9999);
    expect(L().left.size).toBe(LIMITS.left.max);
    L().setSize('bottom', 1);
    expect(L().bottom).toEqual({ size: LIMITS.bottom.min, collapsed: false });
  });

  it('leaves the canvas ≥ 70% of a 1400×900 window by default', () => {
    const d = defaultLayout();
    const s = fitToWindow(d, 1400, 900);
    const side = (n: number) => (n === 0 ? RAIL : n + HANDLE);
    const canvasW = 1400 - side(s.left) - side(s.right);
    const canvasH = 900 - 42 - (s.bottom === 0 ? 30 : s.bottom + HANDLE);
    expect((canvasW * canvasH) / (1400 * 900)).toBeGreaterThanOrEqual(0.7);
  });

  it('never lets the side panels take the canvas below ~40% of a small window', () => {
    const wide = { left: { size: 480, collapsed: false }, right: { size: 640, collapsed: false }, bottom: { size: 640, collapsed: false } };
    const s = fitToWindow(wide, 1400, 900);
    expect(s.left + s.right + 2 * HANDLE).toBeLessThanOrEqual(1400 * (1 - CANVAS_MIN_SHARE));
    expect(s.left / s.right).toBeCloseTo(480 / 640, 1);
    expect(s.bottom).toBeLessThanOrEqual((900 - 42) * (1 - CANVAS_MIN_SHARE));
    // A tiny window: the minimums hold.
    const tiny = fitToWindow(wide, 500, 300);
    expect(tiny.left).toBe(LIMITS.left.min);
    expect(tiny.right).toBe(LIMITS.right.min);
    expect(tiny.bottom).toBeLessThanOrEqual((300 - 42) * (1 - CANVAS_MIN_SHARE));
    // The stored sizes are not changed by a small window.
    expect(wide.left.size).toBe(480);
  });

  it('draws a collapsed panel as 0 (its rail or tab bar)', () => {
    const s = fitToWindow({ ...defaultLayout(), left: { size: 300, collapsed: true } }, 1400, 900);
    expect(s).toEqual({ left: 0, right: 0, bottom: 0 });
  });

  it('reads stored state defensively', () => {
    expect(fromStored(null)).toEqual(defaultLayout());
    expect(fromStored([1])).toEqual(defaultLayout());
    expect(fromStored({ left: { size: 'wide', collapsed: 'yes' }, right: { size: 1e9 }, guideSeen: 1 })).toEqual({
      ...defaultLayout(),
      right: { size: LIMITS.right.max, collapsed: true },
    });
  });
});

describe('toggles and panels that open by themselves', () => {
  it('toggles each panel', () => {
    L().toggle('left');
    expect(L().left.collapsed).toBe(true);
    L().toggle('left');
    expect(L().left.collapsed).toBe(false);
    L().resetSize('right');
    expect(L().right).toEqual({ size: LIMITS.right.default, collapsed: false });
  });

  it('opens the inspector on a selection unless the user closed it', () => {
    const stop = followDocForPanels();
    try {
      docStore.getState().load({ blueprint: 1, id: 'a', steps: [{ id: 's', kind: 'transform', value: 1 }] } as Blueprint);
      expect(L().right.collapsed).toBe(true);
      docStore.getState().select(['s']);
      expect(L().right.collapsed).toBe(false);
      L().toggle('right'); // the user closes it
      docStore.getState().select([]);
      docStore.getState().select(['s']);
      expect(L().right.collapsed).toBe(true);
      L().toggle('right'); // and opens it again: selections open it from now on
      L().setCollapsed('right', true);
      docStore.getState().select([]);
      docStore.getState().select(['s']);
      expect(L().right.collapsed).toBe(false);
    } finally {
      stop();
    }
  });

  it('opens the bottom panel for new errors and a run, and respects an explicit collapse until then', () => {
    const stop = followDocForPanels();
    const doc = { blueprint: 1, id: 'a', steps: [{ id: 's', kind: 'transform', value: 1 }] } as Blueprint;
    const err = (pointer: string) => ({ level: 'error' as const, code: 'X', message: 'x', pointer, step: null, hint: null });
    try {
      docStore.getState().load(doc);
      expect(L().bottom.collapsed).toBe(true);
      // Warnings only: nothing to shout about.
      docStore.getState().setDiagnostics([{ ...err('/steps/0'), level: 'warning' }]);
      expect(L().bottom.collapsed).toBe(true);
      docStore.getState().setDiagnostics([err('/steps/0')]);
      expect(L().bottom.collapsed).toBe(false);
      expect(useBottomTab.getState().tab).toBe('problems');
      // Fixed: it collapses again (it opened by itself).
      docStore.getState().setDiagnostics([]);
      expect(L().bottom.collapsed).toBe(true);
      // The user collapses it while an error is there: the same error keeps it shut…
      docStore.getState().setDiagnostics([err('/steps/0')]);
      L().toggle('bottom');
      docStore.getState().setDiagnostics([err('/steps/0')]);
      expect(L().bottom.collapsed).toBe(true);
      // …a new one opens it.
      docStore.getState().setDiagnostics([err('/steps/0'), err('/id')]);
      expect(L().bottom.collapsed).toBe(false);
      // A run opens it too, after an explicit collapse.
      L().toggle('bottom');
      showTab('run');
      expect(L().bottom.collapsed).toBe(false);
      expect(useBottomTab.getState().tab).toBe('run');
      // Opened by hand: it stays when the errors go.
      L().toggle('bottom');
      showTab('problems', { byUser: true });
      docStore.getState().setDiagnostics([]);
      expect(L().bottom.collapsed).toBe(false);
    } finally {
      stop();
    }
  });

  it('lets a step being built change its errors without popping the panel; a working step that breaks opens it', () => {
    const stop = followDocForPanels();
    const step = (id: string, code: string, pointer: string) => ({ level: 'error' as const, code, message: 'x', pointer, step: id, hint: null });
    try {
      docStore.getState().load({ blueprint: 1, id: 'a', steps: [{ id: 'prev', kind: 'transform', value: 1 }] } as Blueprint);
      docStore.getState().setDiagnostics([]);
      // A Loop dropped: its card is marked, the panel stays shut.
      docStore.getState().addStep({ kind: 'loop', for_each: '', steps: [] } as never);
      const loop = docStore.getState().doc.steps.find((s) => s.kind === 'loop')?.id ?? 'loop';
      docStore.getState().setDiagnostics([step(loop, 'LOOP_INVALID', '/steps/1/for_each')]);
      expect(L().bottom.collapsed).toBe(true);
      // Its list typed: another error of the same step (no body yet) — still being built.
      docStore.getState().setDiagnostics([step(loop, 'LOOP_INVALID', '/steps/1/steps')]);
      expect(L().bottom.collapsed).toBe(true);
      // A step that was working breaks: that is news.
      docStore.getState().setDiagnostics([step(loop, 'LOOP_INVALID', '/steps/1/steps'), step('prev', 'TEMPLATE_SYNTAX', '/steps/0/value')]);
      expect(L().bottom.collapsed).toBe(false);
    } finally {
      stop();
    }
  });

  it('does not count an empty document\'s "no steps" as a problem', () => {
    const stop = followDocForPanels();
    try {
      docStore.getState().load({ blueprint: 1, id: 'new', steps: [] } as Blueprint);
      docStore.getState().setDiagnostics([{ level: 'error', code: 'INVALID_VALUE', message: 'the blueprint has no steps', pointer: '/steps', step: null, hint: null }]);
      expect(L().bottom.collapsed).toBe(true);
    } finally {
      stop();
    }
  });
});

describe('persistence', () => {
  it('saves changes debounced and reads them back at the next start; the guide shows once', async () => {
    vi.useFakeTimers();
    const be = memoryLayoutBackend();
    let stop = await startLayout(be);
    expect(L().loaded).toBe(true);
    expect(L().guideOpen).toBe(true); // first start of this data folder
    L().setSize('left', 300);
    L().setSize('left', 310);
    L().toggle('bottom');
    expect(be.saved).toHaveLength(0);
    vi.advanceTimersByTime(SAVE_DELAY_MS + 10);
    await vi.runAllTimersAsync();
    expect(be.saved).toHaveLength(1); // one write for the burst
    L().showGuide(false);
    vi.advanceTimersByTime(SAVE_DELAY_MS + 10);
    await vi.runAllTimersAsync();
    expect(be.saved.at(-1)).toEqual({
      left: { size: 310, collapsed: false },
      right: { size: LIMITS.right.default, collapsed: true },
      bottom: { size: LIMITS.bottom.default, collapsed: false },
      guideSeen: true,
    });
    stop();

    // A restart: what was saved, and no guide.
    reset();
    stop = await startLayout(be);
    expect(L().left.size).toBe(310);
    expect(L().bottom.collapsed).toBe(false);
    expect(L().guideOpen).toBe(false);
    stop();
  });

  it('keeps the guide shut when the shell says so, and uses the defaults when the backend fails', async () => {
    await startLayout(memoryLayoutBackend({}, true));
    expect(L().guideOpen).toBe(false);
    reset();
    const stop = await startLayout({ load: () => Promise.reject(new Error('no backend')), save: () => Promise.reject(new Error('no')) });
    expect(L()).toMatchObject({ ...defaultLayout(), loaded: true, guideOpen: false });
    L().toggle('left'); // a failing save does not throw
    stop();
  });
});
