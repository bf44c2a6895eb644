//! Files: new, open, save, import and export, the status line, start-up, and the
//! modal and confirmation building blocks the other panels share.

export {
  confirmDiscard,
  exportFile,
  filesStore,
  importFile,
  newBlueprint,
  openBlueprint,
  openStored,
  save,
  showOpenDialog,
  useFiles,
} from './actions';
export { ask, askChoice, AskDialog, cancelAllAsks, type AskOptions, type Choice, type ChoiceOptions } from './ask';
export { askNameAndId, cancelNameAndId, checkNameAndId, idFromName, SaveAsDialog, type NameAndId } from './SaveAsDialog';
export { asBlueprint, freeBlueprintId, newBlueprintDoc } from './documents';
export { FilesToolbar } from './FilesToolbar';
export { Modal, type ModalProps } from './Modal';
export { OpenDialog } from './OpenDialog';
export { startStudio, type StartOptions, type StartResult } from './startup';
export { InterruptedNotice, StatusLine, Toasts } from './StatusLine';
