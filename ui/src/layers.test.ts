// The import arrows of `ui/src` run one way: a folder imports only from the folders
// below it in `LAYERS` (and from itself). The document is at the bottom. A test may
// also render the whole studio (`Studio.tsx`, `App.tsx` at the top).
// ARCHITECTURE.md's UI paragraph gives the same list.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** Bottom first. The top-level files (`App.tsx`, `Studio.tsx`, `main.tsx` …) sit above all. */
const LAYERS = [
  'bindings.ts',
  'testing',
  'doc',
  'backend',
  'run',
  'diagnostics',
  'prefs.ts',
  'graph',
  'shared',
  'panels',
  'canvas',
  'app',
];

const SRC = dirname(fileURLToPath(import.meta.url));
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.(ts|tsx)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The layer of a path relative to `ui/src`: its first segment (a top-level file: itself, or the top). */
function layerOf(rel: string): number {
  const first = rel.split('/')[0]!;
  const named = LAYERS.findIndex((l) => l === first || l === first.replace(/\.(ts|tsx|json)$/, '') + '.ts');
  return named >= 0 ? named : LAYERS.length;
}

/** Every import that points up: `ui/src/file:line: imports 'spec' (layer → layer)`. `files`: paths relative to `ui/src` with their text. */
function upwardImports(files: { rel: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { rel, text } of files) {
    const from = layerOf(rel);
    const isTest = /\.test\.tsx?$/.test(rel);
    text.split('\n').forEach((line, i) => {
      for (const m of line.matchAll(IMPORT)) {
        const target = normalize(join(dirname(rel), m[1]!));
        if (target.startsWith('..')) continue; // outside ui/src (the examples)
        const to = layerOf(target);
        if (to > from && !(isTest && to === LAYERS.length)) {
          found.push(`ui/src/${rel}:${i + 1}: imports '${m[1]}' (${LAYERS[from] ?? 'top'} → ${LAYERS[to] ?? 'top'})`);
        }
      }
    });
  }
  return found;
}

describe('ui/src layers', () => {
  it('imports only from lower layers; move what a lower folder needs down instead', () => {
    const files = sources(SRC).map((f) => ({ rel: relative(SRC, f), text: readFileSync(f, 'utf8') }));
    expect(files.length).toBeGreaterThan(100);
    expect(upwardImports(files)).toEqual([]);
  });

  it('names an upward import with its file and line', () => {
    const files = [
      { rel: 'doc/store.ts', text: "import { x } from './ops';\nimport { layoutGraph } from '../graph/auto-layout';" },
      { rel: 'panels/run/RunPanel.tsx', text: "import { formatMs } from '../../canvas/nodes/run';" },
      { rel: 'panels/run/run-ui.test.tsx', text: "import { Studio } from '../../Studio';" },
      { rel: 'canvas/Canvas.tsx', text: "import { startRun } from '../panels/run/session';" },
    ];
    expect(upwardImports(files)).toEqual([
      "ui/src/doc/store.ts:2: imports '../graph/auto-layout' (doc → graph)",
      "ui/src/panels/run/RunPanel.tsx:1: imports '../../canvas/nodes/run' (panels → canvas)",
    ]);
  });
});
