//! Working beside others on one data folder: the backend tells the window of every change
//! to it, whoever made it (`events.storeChanged`: the studio, an agent through `mcpflow
//! serve`, the CLI, a schedule), and each goes where it matters — saved blueprints to the
//! Open list and the open document (`blueprintsChanged`), runs to History and the canvas
//! (`runStartedElsewhere`), servers to the servers panel.

import { events, type StoreChanged_Serialize } from '../bindings';
import { errorMessage, inTauri, report } from '../backend';
import { blueprintsChanged } from '../panels/files/elsewhere';
import { refreshHistory, refreshWaiting, runStartedElsewhere } from '../panels/run/session';
import { refreshAll, refreshOffers, refreshServers, serversStore } from '../panels/servers/store';

/** What the palette's offers depend on: the servers and whether each may start. */
const serverKey = () => serversStore.getState().servers.map((s) => `${s.name}:${s.approved}`).sort().join(' ');

/** The servers changed: list them again, and what they offer when that set changed. */
async function serversChanged(): Promise<void> {
  const before = serverKey();
  await refreshServers();
  if (serverKey() !== before) await refreshOffers();
}

/** Acts on one change to the data folder. */
export function onStoreChanged(change: StoreChanged_Serialize): void {
  switch (change.what) {
    case 'blueprints':
      void blueprintsChanged();
      break;
    case 'servers':
      void serversChanged();
      break;
    case 'run_started':
      void runStartedElsewhere(change);
      break;
    case 'missed':
      void blueprintsChanged();
      void refreshAll();
      void refreshHistory();
      void refreshWaiting();
      break;
  }
}

/** Listens for changes to the data folder for as long as the window lives (desktop only). */
export async function followStoreChanges(): Promise<void> {
  if (!inTauri()) return;
  try {
    await events.storeChanged.listen((e) => onStoreChanged(e.payload));
  } catch (e) {
    report('warning', `changes made elsewhere (an agent, the CLI) will not show until you reopen: ${errorMessage(e)}`);
  }
}
