//! The document as file text: two-space JSON with a final newline, the format of the
//! examples in workflows/ (and of the engine's exports), so a load → save with no
//! edits writes the same bytes.

import type { Blueprint } from './types';

export function serializeBlueprint(doc: Blueprint): string {
  return JSON.stringify(doc, null, 2) + '\n';
}
