//! Entry point. In the desktop app the studio opens what the backend says
//! (`studio_info` → `open_first`); in a plain browser (`npm run ui:dev`) there is no
//! backend, and it opens the demo blueprint from workflows/ (loaded only then).

import '@xyflow/react/dist/style.css';
import './styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { Blueprint } from './doc/types';
import { followStoreChanges } from './app/live';
import { followService } from './app/service';
import { startStudio } from './panels/files';
import { Studio } from './Studio';

const DEMO = 'workflows/everything-tour.blueprint.json';

// How the studio reaches the data folder (the mcpflow service), from the start (desktop only).
void followService();

void startStudio({
  demo: async () => ({
    doc: (await import('../../workflows/everything-tour.blueprint.json')).default as Blueprint,
    source: DEMO,
  }),
}).then((started) => {
  // Saves and runs by an agent, the CLI or a schedule show as they happen.
  if (started.mode === 'desktop') void followStoreChanges();
});

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <Studio />
  </StrictMode>,
);
