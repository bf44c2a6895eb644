//! Opening a run that waits for a person from outside its blueprint (the notice over the
//! canvas): its blueprint is opened from the store when another one is on the canvas
//! (asking about unsaved changes first), then the run, live, its question in the
//! inspector (`openRun`).

import { backend, report, type WaitingRunInfo } from '../../backend';
import { docStore } from '../../doc/store';
import { openBlueprint } from '../files/actions';
import { openRun, refreshWaiting, useSession } from './session';
import { showTab } from './tabs';

export async function openWaitingRun(w: WaitingRunInfo): Promise<void> {
  if (useSession.getState().active) {
    report('info', 'a run is in flight here: open the waiting run once it ends');
    return;
  }
  const blueprint = w.run.blueprint;
  if (docStore.getState().doc.id !== blueprint) {
    const stored = await backend.listBlueprints().then(
      (list) => list.some((b) => b.id === blueprint),
      () => true,
    );
    if (!stored) {
      report(
        'warning',
        `run ${w.run.id.slice(0, 8)} waits for you, but its blueprint \`${blueprint}\` is not in the store (it ran from an unsaved document): open or import that document, then open the run from History`,
      );
      return;
    }
    if (!(await openBlueprint(blueprint))) return;
  }
  showTab('history');
  await openRun(w.run.id);
  // It may have been answered or ended meanwhile: the list says what waits now.
  void refreshWaiting();
}
