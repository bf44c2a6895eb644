//! The studio: the layout (`App`) with the files toolbar, the palette on the left, the
//! inspector on the right, and the dialogs (open, servers, consent, confirmations).
//! It validates the document while it is edited (desktop only), and hands what the
//! servers offer (listed for the palette) to the inspector for its forms.
//!
//! Start-up (what to open) is `startStudio` in `panels/files`, called by `main.tsx`
//! before or while this renders.

import { useEffect } from 'react';
import { App } from './App';
import { startLayout } from './shared/layout';
import { layoutBackend } from './app/ui-state';
import { inTauri, startValidation } from './backend';
import { AskDialog, FilesToolbar, OpenDialog, SaveAsDialog, save } from './panels/files';
import { Inspector, setToolSchemas } from './panels/inspector';
import { Palette } from './panels/palette';
import { BottomTabs, RunToolbar } from './panels/run';
import { ConsentDialog, ServersPanel, serversStore } from './panels/servers';

const saveShortcut = () => void save();

/** Tools are checked against the servers started so far: validate again when the
 * configured servers or what they offer change (a server approved and listed). */
const revalidateOnServers = (again: () => void) =>
  serversStore.subscribe((now, before) => {
    if (now.offers !== before.offers || now.servers !== before.servers) again();
  });

export interface StudioProps {
  /** Validate while editing (default: when there is a desktop backend). */
  validate?: boolean;
}

export function Studio({ validate = inTauri() }: StudioProps) {
  useEffect(() => (validate ? startValidation({ also: revalidateOnServers }) : undefined), [validate]);
  useEffect(() => {
    let stop: (() => void) | undefined;
    let live = true;
    void startLayout(layoutBackend()).then((s) => (live ? (stop = s) : s()));
    return () => {
      live = false;
      stop?.();
    };
  }, []);
  useEffect(() => {
    setToolSchemas(serversStore.getState().offers);
    return serversStore.subscribe((now, before) => {
      if (now.offers !== before.offers) setToolSchemas(now.offers);
    });
  }, []);
  return (
    <>
      <App
        files={<FilesToolbar />}
        toolbar={<RunToolbar />}
        left={<Palette />}
        right={<Inspector />}
        bottom={<BottomTabs />}
        onSaveShortcut={saveShortcut}
      />
      <ServersPanel />
      <OpenDialog />
      <ConsentDialog />
      <AskDialog />
      <SaveAsDialog />
    </>
  );
}
