//! Over the canvas, while it shows a past run's definition (`past-definition.ts`): what
//! it is, and the two ways out. Test hooks: `past-definition`, `past-show-current`,
//! `past-restore`.

import { memo } from 'react';
import { restoreThisVersion, showCurrent, usePastDefinition } from './past-definition';

export const PastDefinitionBanner = memo(function PastDefinitionBanner() {
  const shown = usePastDefinition((s) => s.shown !== null);
  if (!shown) return null;
  return (
    <div className="past-definition" role="status" data-testid="past-definition">
      <span title="The canvas shows the blueprint as this run ran it; it cannot be edited.">This run used an earlier version (read-only).</span>
      <button type="button" data-testid="past-show-current" onClick={showCurrent}>
        Show current
      </button>
      <button type="button" className="primary" data-testid="past-restore" onClick={restoreThisVersion} title="Make this version the document again (not saved yet; Undo goes back)">
        Restore this version
      </button>
    </div>
  );
});
