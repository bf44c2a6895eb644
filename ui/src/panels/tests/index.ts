//! The Tests tab: a blueprint's tests, Run all, and "Save as test" from a finished run.

export { TestsPanel } from './TestsPanel';
export { refreshTests, runAllTests, saveRunAsTest, useTests } from './store';
