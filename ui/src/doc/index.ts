//! The document model: the blueprint being edited, its store (undo/redo, selection,
//! diagnostics, clipboard), the pure edits behind it, and helpers to read it.
//!
//! Panels use the store:
//!
//! ```ts
//! import { useDoc, docStore } from '../doc';
//! const step = useDoc((s) => (s.selected[0] ? findStep(s.doc, s.selected[0]) : undefined));
//! docStore.getState().patchStep(step.id, { args: { message: 'hi' } });
//! ```
//!
//! Read with narrow selectors (or `useShallow`), never the whole state. Every edit
//! action is one undo entry; wrap several in `batch(label, fn)` to make them one.

export {
  createDocStore,
  docStore,
  EMPTY_BLUEPRINT,
  HISTORY_LIMIT,
  READ_ONLY,
  sameIds,
  useDoc,
  type DocMeta,
  type DocState,
  type DocStore,
  type HistoryEntry,
} from './store';
export {
  addStep,
  connect,
  connectionProblem,
  disconnect,
  EditRefused,
  insertSteps,
  makeExplicit,
  materializeAfter,
  moveNodes,
  parseHandle,
  patchStep,
  removeSteps,
  renameStep,
  setFallback,
  setSettings,
  updateStep,
  type InsertOptions,
  type NodeBounds,
} from './ops';
export { copySteps, parseClipboard, pasteSteps, type ClipboardData, type PasteOptions } from './clipboard';
export { diagnosticsByStep, diagnosticTarget, type StepDiagnostics } from './diagnostics';
export { listRoles, stepDeps, switchTargets, type ListRoles, type StepDeps } from './deps';
export { checkStepId, idBase, RESERVED_STEP_IDS, sanitizeId, STEP_ID_PATTERN, uniqueId } from './ids';
export {
  allLists,
  allStepIds,
  ancestors,
  containerSteps,
  findStep,
  isLoop,
  locateStep,
  resolvePointer,
  stepPointer,
  subtreeIds,
  type StepLocation,
} from './query';
export { BLUEPRINT_KEY_ORDER, STEP_KEY_ORDER, setKey, deleteKey } from './key-order';
export { serializeBlueprint } from './serialize';
export * from './types';
