//! The empty canvas says what to do: drag a tool from the palette or double-click to
//! add a step, or open one of the stored examples. Drawn by `App` over the canvas; only
//! its links take the pointer (the canvas under it stays usable).

import { useEffect, useState } from 'react';
import { backend, inTauri, type BlueprintInfo } from '../backend';
import { useDoc } from '../doc/store';
import { openBlueprint, showOpenDialog } from '../panels/files/actions';
import { useElsewhere } from '../panels/files/elsewhere';

const SHOWN = 4;

export function EmptyHint() {
  const empty = useDoc((s) => Array.isArray(s.doc.steps) && s.doc.steps.length === 0);
  const [examples, setExamples] = useState<BlueprintInfo[]>([]);
  const desktop = inTauri();
  // Read again when blueprints are saved elsewhere (an agent, the CLI).
  const generation = useElsewhere((s) => s.listGeneration);
  useEffect(() => {
    if (!empty || !desktop) return;
    let live = true;
    backend.listBlueprints().then(
      (list) => live && setExamples([...list].sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id))),
      () => live && setExamples([]),
    );
    return () => {
      live = false;
    };
  }, [empty, desktop, generation]);
  if (!empty) return null;
  return (
    <div className="empty-hint" data-testid="empty-hint">
      <div className="empty-hint-card">
        <p className="empty-hint-title">This blueprint has no steps yet</p>
        <p>Drag a tool from the palette, or double-click the canvas to add a step.</p>
        {desktop ? (
          <p className="empty-hint-links">
            Or open an example:{' '}
            {examples.slice(0, SHOWN).map((b) => (
              <button key={b.id} type="button" className="link" data-testid={`empty-open-${b.id}`} title={b.description ?? b.id} onClick={() => void openBlueprint(b.id)}>
                {b.name || b.id}
              </button>
            ))}
            <button type="button" className="link" data-testid="empty-open-more" onClick={() => showOpenDialog(true)}>
              {examples.length > SHOWN ? 'more…' : 'Open…'}
            </button>
          </p>
        ) : null}
      </div>
    </div>
  );
}
