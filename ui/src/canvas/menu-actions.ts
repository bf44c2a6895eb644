//! What the canvas's context menus offer, pure: `nodeMenu` (one step or the
//! selection), `edgeMenu` and `canvasMenu` build the items from a snapshot of the
//! state; choosing an item edits the document through the doc store, or calls the
//! view's commands passed in (`MenuEnv`), so Vitest can check both with the real store.

import { docStore } from '../doc/store';
import { findStep } from '../doc/query';
import type { XY } from '../doc/types';
import type { FlowEdge } from '../graph/types';

export interface MenuItem {
  id: string;
  label: string;
  /** The keyboard shortcut shown beside the label. */
  hint?: string;
  disabled?: boolean;
  /** Why it is disabled, or what it does (a tooltip). */
  title?: string;
  /** A line above this item. */
  separated?: boolean;
  run(): void;
}

/** A re-run as `startRun` takes it (panels/run/session.ts). */
export interface RerunRequest {
  debug: false;
  rerun: { runId: string; step: string; mode: 'step' | 'from_here' };
}

/** What a menu needs from the canvas and the run panel. */
export interface MenuEnv {
  /** Where every node is drawn (for duplicate). */
  positions(): Record<string, XY>;
  fitView(): void;
  autoLayout(): void;
  /** Opens the quick-add search at the menu's point. */
  quickAdd(): void;
  /** Pastes at the menu's point. */
  paste(): void;
  rename(id: string): void;
  toggleBreakpoint(id: string): void;
  startRun(opts: RerunRequest): void;
}

export interface NodeMenuState {
  /** The steps the menu acts on: the selection when the clicked step is in it, else the clicked step. */
  ids: readonly string[];
  /** The last run of this blueprint on the canvas, if any. */
  runId: string | null;
  /** A run is in flight (or starting). */
  running: boolean;
  /** Steps of this blueprint with a breakpoint. */
  breakpoints: readonly string[];
}

const NO_RUN = 'Run the blueprint once first: a re-run takes the earlier steps’ outputs from the last run';
const BUSY = 'A run is in progress';

/** Whether a step is switched off (`"disabled": true`). */
export function isDisabled(id: string): boolean {
  const step = findStep(docStore.getState().doc, id) as { disabled?: unknown } | undefined;
  return step?.disabled === true;
}

export function nodeMenu(state: NodeMenuState, env: MenuEnv): MenuItem[] {
  const ids = [...state.ids];
  const one = ids.length === 1 ? ids[0]! : null;
  const many = ids.length > 1 ? ` (${ids.length} steps)` : '';
  const store = () => docStore.getState();
  const allDisabled = ids.length > 0 && ids.every(isDisabled);
  const allBreak = ids.length > 0 && ids.every((id) => state.breakpoints.includes(id));
  const rerunProblem = state.running ? BUSY : state.runId === null ? NO_RUN : null;
  const rerun = (mode: 'step' | 'from_here') => () => {
    if (one && state.runId) env.startRun({ debug: false, rerun: { runId: state.runId, step: one, mode } });
  };
  const items: MenuItem[] = [
    {
      id: 'rename',
      label: 'Rename',
      hint: 'F2',
      disabled: !one,
      title: one ? 'Give the step a name (its id stays)' : 'Rename one step at a time',
      run: () => one && env.rename(one),
    },
    {
      id: 'duplicate',
      label: `Duplicate${many}`,
      hint: 'Ctrl+D',
      run: () => void store().duplicate(ids, env.positions()),
    },
    {
      id: 'delete',
      label: `Delete${many}`,
      hint: 'Del',
      run: () => store().removeSteps(ids),
    },
    {
      id: 'breakpoint',
      label: allBreak ? 'Remove breakpoint' : 'Set breakpoint',
      separated: true,
      title: 'Debug pauses before a step with a breakpoint',
      run: () => {
        for (const id of ids) if (state.breakpoints.includes(id) === allBreak) env.toggleBreakpoint(id);
      },
    },
    {
      id: 'run-step',
      label: 'Run this step',
      disabled: !one || rerunProblem !== null,
      title: !one ? 'Run one step at a time' : (rerunProblem ?? 'Run only this step, with the inputs of the last run'),
      run: rerun('step'),
    },
    {
      id: 'run-from-here',
      label: 'Run from here',
      disabled: !one || rerunProblem !== null,
      title: !one
        ? 'Run from one step at a time'
        : (rerunProblem ?? 'Run this step and everything after it; the steps before keep the last run’s outputs'),
      run: rerun('from_here'),
    },
    {
      id: 'disable',
      label: allDisabled ? `Enable${many}` : `Disable${many}`,
      separated: true,
      title: allDisabled ? 'Run the step again' : 'Skip the step when the blueprint runs (it stays in the file)',
      run: () =>
        store().batch(allDisabled ? 'Enable' : 'Disable', () => {
          for (const id of ids) store().patchStep(id, { disabled: allDisabled ? undefined : true });
        }),
    },
  ];
  return items;
}

/** The menu of an edge: Delete for a written edge (an implicit one is a click's business, see ImplicitEdge). */
export function edgeMenu(edge: Pick<FlowEdge, 'source' | 'target' | 'sourceHandle' | 'data'>): MenuItem[] {
  const implicit = edge.data?.kind === 'after' && edge.data.implicit;
  return [
    {
      id: 'delete-edge',
      label: 'Delete connection',
      hint: 'Del',
      disabled: implicit,
      title: implicit ? 'This edge comes from the order of the steps: click it to keep or remove it' : undefined,
      run: () => void docStore.getState().disconnect(edge.source, edge.target, edge.sourceHandle),
    },
  ];
}

export function canvasMenu(env: MenuEnv): MenuItem[] {
  const s = docStore.getState();
  const empty = s.doc.steps.length === 0;
  return [
    { id: 'add-step', label: 'Add step here…', hint: 'double-click', run: () => env.quickAdd() },
    {
      id: 'paste',
      label: 'Paste',
      hint: 'Ctrl+V',
      disabled: s.clipboard === null,
      title: s.clipboard === null ? 'Copy steps first (Ctrl+C)' : undefined,
      run: () => env.paste(),
    },
    {
      id: 'auto-layout',
      label: 'Auto-layout',
      hint: 'Shift+L',
      separated: true,
      disabled: empty,
      run: () => env.autoLayout(),
    },
    { id: 'fit', label: 'Fit to view', hint: 'Shift+1', disabled: empty, run: () => env.fitView() },
  ];
}
