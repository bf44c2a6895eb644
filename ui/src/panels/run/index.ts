//! Runs in the studio: the toolbar controls, the bottom panel's Run and History tabs,
//! the inspector's run section, breakpoints, and the session that connects them to
//! the backend and the run store (`../../run`).

export { BottomTabs } from './BottomTabs';
export { breakpointsOf, useBreakpoints, useBreakpointsOf } from './breakpoints';
export { JsonView, jsonSize } from './JsonView';
export { HistoryPanel, RunPanel } from './RunPanel';
export { PastDefinitionBanner } from './PastDefinitionBanner';
export { RunToolbar } from './RunToolbar';
export { closeRun, control, openRun, refreshHistory, startRun, useSession } from './session';
export { StepRun } from './StepRun';
export { showTab, useBottomTab, type BottomTab } from './tabs';
