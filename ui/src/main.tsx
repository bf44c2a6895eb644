//! Entry point. Until the shell loads blueprints from the backend, the studio opens
//! a demo blueprint from workflows/ so `npm run ui:dev` shows something.

import '@xyflow/react/dist/style.css';
import './styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import demo from '../../workflows/everything-tour.blueprint.json';
import { App } from './App';
import { docStore } from './doc/store';
import type { Blueprint } from './doc/types';

docStore.getState().load(demo as Blueprint, { source: 'workflows/everything-tour.blueprint.json' });

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
