//! The document store (zustand): the blueprint being edited — the single source of
//! truth the canvas is derived from — with undo/redo, the dirty flag, selection,
//! diagnostics and the internal clipboard.
//!
//! Every edit is one undo entry; `batch` groups several edits into one. Undo keeps
//! whole-document snapshots, which is cheap because edits share structure. `dirty`
//! compares the document with the saved snapshot by identity, so undoing back to
//! the saved state clears it.

import { useStore } from 'zustand';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { cycleEdgeIds } from './cycle';
import { estimateSize, nearestFree, newStepPosition, obstaclesIn, placeAll, type MeasuredSizes } from './placement';
import { copySteps, parseClipboard, pasteSteps, type ClipboardData } from './clipboard';
import { diagnosticsByStep, diagnosticTarget, type StepDiagnostics } from './diagnostics';
import * as ops from './ops';
import { allStepIds, containerSteps, findStep, locateStep } from './query';
import type {
  Blueprint,
  Diagnostic,
  EditResult,
  SettingsPatch,
  Step,
  StepPatch,
  StepTemplate,
  XY,
} from './types';

/** Why an edit of a read-only document is refused. */
export const READ_ONLY = 'this is the definition a past run used: Show current (or Restore this version) to edit';

/** How many edits undo remembers. */
export const HISTORY_LIMIT = 200;

/** Whatever the shell wants to keep with the document (file path, revision, …). */
export type DocMeta = Record<string, unknown>;

export interface HistoryEntry {
  /** The document before the edit (in `past`) or after it (in `future`). */
  doc: Blueprint;
  /** What the edit was, e.g. "Move", "Connect" — for "Undo Move" menus. */
  label: string;
}

export interface DocState {
  // ---- state (read with selectors; change only through the actions) ----
  doc: Blueprint;
  meta: DocMeta;
  /** The snapshot last loaded or saved; `dirty` is `doc !== savedDoc`. */
  savedDoc: Blueprint;
  dirty: boolean;
  past: HistoryEntry[];
  future: HistoryEntry[];
  /** Selected step ids. */
  selected: string[];
  /** A JSON pointer inside the (single) selected step, e.g. `/args/message`, set by a diagnostic click. */
  field: string | null;
  /** An edge a clicked diagnostic is about (a dependency cycle's), for the canvas to select; `nonce` changes on every click. */
  selectedEdge: { id: string; nonce: number } | null;
  /** Set when the canvas should bring a step into view; `nonce` changes on every request. */
  reveal: { id: string; nonce: number } | null;
  diagnostics: Diagnostic[];
  /** Diagnostics by the step they are about (`step`, or the step the pointer enters). */
  diagnosticsByStep: Record<string, StepDiagnostics>;
  clipboard: ClipboardData | null;
  /** Counts `load` calls, so views can react to a new document (e.g. fit it into view). */
  generation: number;
  /** Shown to look at, not to edit (a past run's definition): every edit is refused. */
  readOnly: boolean;

  // ---- document lifecycle ----
  /** Replaces the document; clears history, selection and diagnostics; not dirty. */
  load(doc: Blueprint, meta?: DocMeta): void;
  /** Refuses (or allows again) every edit of the document shown; `load` allows them. */
  setReadOnly(on: boolean): void;
  /** The current document is what is stored now (optionally with new meta). */
  markSaved(meta?: DocMeta): void;
  undo(): boolean;
  redo(): boolean;
  /** Runs several actions as one undo entry; returns what `fn` returns. */
  batch<T>(label: string, fn: () => T): T;

  // ---- edits (each one undoable) ----
  /**
   * Adds a step (id generated unless the template's is free), not connected to anything
   * (see `ops.addStep`); returns its id, or null if refused. It lands at
   * `opts.position`; without one next to the single selected step (in its list), else
   * at the centre of the view (`setCanvasView`); never on top of a card
   * (`placement.ts`, `newStepPosition`).
   */
  addStep(step: StepTemplate, opts?: ops.InsertOptions): string | null;
  /**
   * The canvas tells where the centre of its view is (flow coordinates), for steps added
   * without a point, and the measured sizes of its cards, so new steps land close to
   * them but never on them. `null` when no canvas is shown.
   */
  setCanvasView(view: CanvasView | null): void;
  /** Removes steps (loops with their body) and every reference to them. */
  removeSteps(ids: readonly string[]): void;
  /** Replaces a step; a different `id` in the replacement renames it. */
  updateStep(id: string, step: Step): EditResult;
  /** Sets fields of a step (`undefined` removes one); `id` renames. */
  patchStep(id: string, patch: StepPatch): EditResult;
  /** Renames a step and its references (`after`, switch targets, `fallback`, `layout`); NOT templates. */
  renameStep(from: string, to: string): EditResult;
  /** Connects from a handle: `out` edits the target's `after`, `case-N`/`default` the switch, `fallback` the fallback. */
  connect(source: string, target: string, sourceHandle?: string | null): EditResult;
  /** Writes an implicit `source → target` dependency into the target's `after` (see `ops.makeExplicit`). */
  makeExplicit(source: string, target: string): EditResult;
  /** Removes a connection (see `connect`); an implicit dependency is removed by writing `after`. */
  disconnect(source: string, target: string, sourceHandle?: string | null): EditResult;
  setFallback(id: string, fallbackId: string | null): EditResult;
  /** Writes `layout` positions (body steps relative to their loop; loops may pass width/height). */
  moveNodes(positions: Record<string, ops.NodeBounds>): void;
  /** Copies steps next to themselves (same list, appended); returns the new ids (selected). */
  duplicate(ids: readonly string[], positions?: Record<string, XY>): string[];
  /** Puts steps on the internal clipboard; returns the clipboard JSON text for the system clipboard. */
  copy(ids: readonly string[], positions?: Record<string, XY>): string;
  /**
   * Pastes `opts.text` (clipboard JSON, a step, steps or a blueprint) or the internal
   * clipboard at `position` (top-left of the pasted steps); returns the new ids (selected).
   */
  paste(position?: XY, opts?: { text?: string; container?: string | null }): string[];
  /** Sets top-level fields (id, name, description, inputs, servers, on_error, retry, limits, schedule, expose, output). */
  setSettings(patch: SettingsPatch): EditResult;

  // ---- selection and diagnostics (not undoable) ----
  select(ids: readonly string[], opts?: { field?: string | null; reveal?: boolean }): void;
  selectAll(): void;
  /** Selects the step (and field) a diagnostic is about, and asks the canvas to show it. */
  selectDiagnostic(d: Diagnostic): void;
  setDiagnostics(list: readonly Diagnostic[]): void;
}

/** What the canvas tells the store about its view (see `setCanvasView`). */
export interface CanvasView {
  center(): XY | null;
  sizes(): MeasuredSizes;
}

export const EMPTY_BLUEPRINT: Blueprint = { blueprint: 1, id: 'untitled', name: 'Untitled', steps: [] };

export type DocStore = StoreApi<DocState>;

/** A new, independent document store (the app uses `docStore`; tests make their own). */
export function createDocStore(initial: Blueprint = EMPTY_BLUEPRINT): DocStore {
  return createStore<DocState>()((set, get) => {
    // The document before the outermost running `batch`, if any.
    let batchStart: Blueprint | null = null;
    let batchDepth = 0;
    let nonce = 0;
    // The canvas's view (its centre, its cards' sizes), when a canvas is shown.
    let canvasView: CanvasView | null = null;

    /** The list and the free spot a new step lands in (see `addStep`). */
    const landing = (doc: Blueprint, step: StepTemplate, opts: ops.InsertOptions): { container: string | null; position?: XY } => {
      const s = get();
      const one = s.selected.length === 1 ? locateStep(doc, s.selected[0]!) : null;
      const container = opts.container !== undefined ? opts.container : opts.position ? null : (one?.container ?? null);
      const list = containerSteps(doc, container);
      if (!list || !Array.isArray(doc.steps)) return { container };
      const near = !opts.position && one && one.container === container ? one.step.id : null;
      const position = newStepPosition(doc.steps, doc.layout, {
        container,
        at: opts.position ?? null,
        near,
        viewCenter: container === null && !opts.position && !near ? (canvasView?.center() ?? null) : null,
        size: estimateSize(step as unknown as Step),
        measured: canvasView?.sizes(),
      });
      return { container, position };
    };

    const derived = (doc: Blueprint, s: DocState): Partial<DocState> => {
      const out: Partial<DocState> = { doc, dirty: doc !== s.savedDoc };
      const keep = s.selected.filter((id) => findStep(doc, id));
      if (keep.length !== s.selected.length) {
        out.selected = keep;
        if (keep.length !== 1) out.field = null;
      }
      if (s.diagnostics.length) out.diagnosticsByStep = diagnosticsByStep(doc, s.diagnostics);
      return out;
    };

    /** Makes `next` the document; one undo entry unless inside `batch`. */
    const commit = (label: string, next: Blueprint, extra: Partial<DocState> = {}) => {
      const s = get();
      if (s.readOnly) return;
      if (next === s.doc) {
        if (Object.keys(extra).length) set(extra);
        return;
      }
      if (batchDepth > 0) {
        set({ ...derived(next, { ...s, ...extra }), ...extra });
        return;
      }
      const past = [...s.past, { doc: s.doc, label }];
      if (past.length > HISTORY_LIMIT) past.splice(0, past.length - HISTORY_LIMIT);
      set({ ...derived(next, { ...s, ...extra }), ...extra, past, future: [] });
    };

    /** Runs a pure edit; a refusal becomes `{ ok: false, reason }`. */
    const edit = (
      label: string,
      fn: (doc: Blueprint) => Blueprint,
      extra?: (s: DocState) => Partial<DocState>,
    ): EditResult => {
      if (get().readOnly) return { ok: false, reason: READ_ONLY };
      try {
        const next = fn(get().doc);
        commit(label, next, extra ? extra(get()) : {});
        return { ok: true };
      } catch (e) {
        if (e instanceof ops.EditRefused) return { ok: false, reason: e.message };
        throw e;
      }
    };

    /**
     * Moves pasted or duplicated steps (the top-level ones of `ids`, in `container`) off
     * the cards that were there before, together, to the nearest place where none of
     * them covers one (their common box is nudged, `placement.ts`).
     */
    const keepOff = (before: Blueprint, after: Blueprint, ids: readonly string[], container: string | null): Blueprint => {
      const steps = Array.isArray(before.steps) ? before.steps : [];
      const obstacles = obstaclesIn(steps, container, before.layout, canvasView?.sizes());
      const placed = placeAll(Array.isArray(after.steps) ? after.steps : [], after.layout);
      const boxes = ids.map((id) => (after.layout?.[id] ? placed.get(id) : undefined)).filter((p) => p !== undefined);
      if (boxes.length === 0 || obstacles.length === 0) return after;
      const x0 = Math.min(...boxes.map((b) => b.position.x));
      const y0 = Math.min(...boxes.map((b) => b.position.y));
      const size = {
        width: Math.max(...boxes.map((b) => b.position.x + b.width)) - x0,
        height: Math.max(...boxes.map((b) => b.position.y + b.height)) - y0,
      };
      const to = nearestFree({ x: x0, y: y0 }, size, obstacles);
      if (to.x === x0 && to.y === y0) return after;
      const moved: Record<string, XY> = {};
      for (const id of ids) {
        const e = after.layout?.[id];
        if (e) moved[id] = { x: e.x + to.x - x0, y: e.y + to.y - y0 };
      }
      return ops.moveNodes(after, moved);
    };

    const groupByContainer = (doc: Blueprint, ids: readonly string[]) => {
      const groups = new Map<string | null, string[]>();
      for (const id of ids) {
        const loc = locateStep(doc, id);
        if (!loc) continue;
        const g = groups.get(loc.container) ?? [];
        g.push(id);
        groups.set(loc.container, g);
      }
      return groups;
    };

    return {
      doc: initial,
      meta: {},
      savedDoc: initial,
      dirty: false,
      past: [],
      future: [],
      selected: [],
      field: null,
      selectedEdge: null,
      reveal: null,
      diagnostics: [],
      diagnosticsByStep: {},
      clipboard: null,
      generation: 0,
      readOnly: false,

      load(doc, meta = {}) {
        set({
          generation: get().generation + 1,
          doc,
          meta,
          savedDoc: doc,
          dirty: false,
          past: [],
          future: [],
          selected: [],
          field: null,
          selectedEdge: null,
          reveal: null,
          diagnostics: [],
          diagnosticsByStep: {},
          readOnly: false,
        });
      },

      setReadOnly(on) {
        if (get().readOnly !== on) set({ readOnly: on });
      },

      markSaved(meta) {
        const s = get();
        set({ savedDoc: s.doc, dirty: false, ...(meta ? { meta } : {}) });
      },

      undo() {
        const s = get();
        if (s.readOnly) return false;
        const entry = s.past[s.past.length - 1];
        if (!entry || batchDepth > 0) return false;
        set({
          ...derived(entry.doc, s),
          past: s.past.slice(0, -1),
          future: [...s.future, { doc: s.doc, label: entry.label }],
        });
        return true;
      },

      redo() {
        const s = get();
        if (s.readOnly) return false;
        const entry = s.future[s.future.length - 1];
        if (!entry || batchDepth > 0) return false;
        set({
          ...derived(entry.doc, s),
          future: s.future.slice(0, -1),
          past: [...s.past, { doc: s.doc, label: entry.label }],
        });
        return true;
      },

      batch(label, fn) {
        if (batchDepth === 0) batchStart = get().doc;
        batchDepth++;
        try {
          return fn();
        } finally {
          batchDepth--;
          if (batchDepth === 0) {
            const start = batchStart!;
            batchStart = null;
            const s = get();
            if (s.doc !== start) {
              const past = [...s.past, { doc: start, label }];
              if (past.length > HISTORY_LIMIT) past.splice(0, past.length - HISTORY_LIMIT);
              set({ past, future: [] });
            }
          }
        }
      },

      addStep(step, opts = {}) {
        let id: string | null = null;
        edit(`Add ${step.kind}`, (doc) => {
          const r = ops.addStep(doc, step, { ...opts, ...landing(doc, step, opts) });
          id = r.id;
          return r.doc;
        });
        return id;
      },

      setCanvasView(view) {
        canvasView = view;
      },

      removeSteps(ids) {
        edit(ids.length > 1 ? 'Delete steps' : 'Delete step', (doc) => ops.removeSteps(doc, ids));
      },

      updateStep(id, step) {
        return edit('Edit step', (doc) => ops.updateStep(doc, id, step), renamedSelection(id, step.id));
      },

      patchStep(id, patch) {
        const to = typeof patch.id === 'string' ? patch.id : undefined;
        return edit('Edit step', (doc) => ops.patchStep(doc, id, patch), renamedSelection(id, to));
      },

      renameStep(from, to) {
        return edit('Rename step', (doc) => ops.renameStep(doc, from, to), renamedSelection(from, to));
      },

      connect(source, target, sourceHandle) {
        return edit('Connect', (doc) => ops.connect(doc, source, target, sourceHandle));
      },

      makeExplicit(source, target) {
        return edit('Make explicit', (doc) => ops.makeExplicit(doc, source, target));
      },

      disconnect(source, target, sourceHandle) {
        return edit('Disconnect', (doc) => ops.disconnect(doc, source, target, sourceHandle));
      },

      setFallback(id, fallbackId) {
        return edit(fallbackId ? 'Set fallback' : 'Remove fallback', (doc) => ops.setFallback(doc, id, fallbackId));
      },

      moveNodes(positions) {
        edit('Move', (doc) => ops.moveNodes(doc, positions));
      },

      duplicate(ids, positions = {}) {
        const created: string[] = [];
        edit('Duplicate', (doc) => {
          let next = doc;
          for (const [container, group] of groupByContainer(doc, ids)) {
            const clip = copySteps(doc, group, positions);
            if (clip.steps.length === 0) continue;
            const r = pasteSteps(next, clip, { container });
            next = keepOff(next, r.doc, r.ids, container);
            created.push(...r.ids);
          }
          return next;
        });
        if (created.length) set({ selected: created, field: null });
        return created;
      },

      copy(ids, positions = {}) {
        const clip = copySteps(get().doc, ids, positions);
        set({ clipboard: clip.steps.length ? clip : get().clipboard });
        return JSON.stringify(clip, null, 2);
      },

      paste(position, opts = {}) {
        const clip = opts.text !== undefined ? parseClipboard(opts.text) : get().clipboard;
        if (!clip || clip.steps.length === 0) return [];
        let created: string[] = [];
        const r = edit('Paste', (doc) => {
          const p = pasteSteps(doc, clip, { container: opts.container ?? null, position });
          created = p.ids;
          return keepOff(doc, p.doc, p.ids, opts.container ?? null);
        });
        if (!r.ok) return [];
        if (created.length) set({ selected: created, field: null });
        return created;
      },

      setSettings(patch) {
        return edit('Edit settings', (doc) => ops.setSettings(doc, patch));
      },

      select(ids, opts = {}) {
        const s = get();
        const selected = ids.filter((id) => findStep(s.doc, id));
        const field = selected.length === 1 ? (opts.field ?? null) : null;
        const reveal = opts.reveal && selected[0] ? { id: selected[0], nonce: ++nonce } : s.reveal;
        if (sameIds(selected, s.selected) && field === s.field && reveal === s.reveal) return;
        set({ selected, field, reveal });
      },

      selectAll() {
        get().select(allStepIds(get().doc));
      },

      selectDiagnostic(d) {
        const t = diagnosticTarget(get().doc, d);
        if (t.step) get().select([t.step], { field: t.field, reveal: true });
        else get().select([]);
        // A dependency cycle names an edge: the canvas selects it.
        const edge = cycleEdgeIds(get().doc, d)[0];
        set({ selectedEdge: edge ? { id: edge, nonce: ++nonce } : null });
      },

      setDiagnostics(list) {
        set({ diagnostics: list.slice(), diagnosticsByStep: diagnosticsByStep(get().doc, list) });
      },
    };

    /** The selection after `from` is renamed to `to` (nothing when it is not renamed). */
    function renamedSelection(from: string, to: string | undefined) {
      return (s: DocState): Partial<DocState> =>
        to && to !== from && s.selected.includes(from) ? { selected: s.selected.map((id) => (id === from ? to : id)) } : {};
    }
  });
}

export function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The app's document store. */
export const docStore: DocStore = createDocStore();

/** Reads the app's document store in a component: `useDoc((s) => s.selected)`. Select narrowly (or with `useShallow`). */
export function useDoc<T>(selector: (s: DocState) => T): T {
  return useStore(docStore, selector);
}
