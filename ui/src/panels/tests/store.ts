//! A blueprint's tests (the data folder's `tests/<id>/`): the list, the last "Run all",
//! and saving the run on the canvas as a test. Each test replays its cassette with no
//! server started, with the document on the canvas as the blueprint under test — the
//! code `mcpflow test` runs.

import { create } from 'zustand';
import { backend, errorMessage, inTauri, report, type TestInfo } from '../../backend';
import type { Blueprint } from '../../doc/types';
import { showTab } from '../run/tabs';

export interface TestsState {
  /** The blueprint the list is of. */
  of: string | null;
  folder: string;
  tests: TestInfo[];
  /** "Run all" in flight. */
  running: boolean;
  /** Saving a run as a test in flight. */
  saving: boolean;
  /** Why the list could not be read or the tests could not run. */
  error: string | null;
}

export const useTests = create<TestsState>()(() => ({ of: null, folder: '', tests: [], running: false, saving: false, error: null }));

/** Reads blueprint `id`'s tests (not run: their last results are kept by name). */
export async function refreshTests(id: string): Promise<void> {
  if (!inTauri()) return;
  try {
    const list = await backend.blueprintTests(id);
    const before = useTests.getState();
    const last = new Map((before.of === id ? before.tests : []).map((t) => [t.name, t]));
    const tests = list.tests.map((t) => last.get(t.name) ?? t);
    useTests.setState({ of: id, folder: list.folder, tests, error: null });
  } catch (e) {
    useTests.setState({ of: id, folder: '', tests: [], error: errorMessage(e) });
  }
}

/** Runs every test of `doc`'s blueprint with `doc` (saved or not) under test. */
export async function runAllTests(doc: Blueprint): Promise<void> {
  if (useTests.getState().running) return;
  useTests.setState({ running: true, error: null });
  try {
    const tests = await backend.runBlueprintTests(doc);
    useTests.setState({ of: doc.id, tests, running: false });
  } catch (e) {
    useTests.setState({ running: false, error: errorMessage(e) });
  }
}

/** Saves finished run `runId` of `doc` as a test, then shows the Tests tab with it. */
export async function saveRunAsTest(doc: Blueprint, runId: string): Promise<void> {
  if (useTests.getState().saving) return;
  useTests.setState({ saving: true });
  try {
    const saved = await backend.saveRunAsTest(doc, runId);
    useTests.setState({ saving: false });
    await refreshTests(doc.id);
    showTab('tests', { byUser: true });
    const calls = `${saved.exchanges} recorded call${saved.exchanges === 1 ? '' : 's'}`;
    report('success', `saved the run as test ${saved.name} (${calls}); it passes`);
  } catch (e) {
    useTests.setState({ saving: false });
    report('error', errorMessage(e));
  }
}
