//! The live preview of a template (issue 33, point 3): what it gives against the last
//! run, or why it gives nothing — computed by the engine's own renderer
//! (`preview_template`), so the preview and the run agree. Without a run the template is
//! only compiled: its syntax errors show as one types. Asked at most once per pause in
//! typing (`DELAY`), the last answer winning.

import { useEffect, useState } from 'react';
import { backend, errorMessage, inTauri } from '../../backend';
import type { Json } from '../../doc';
import { hasTemplate } from './completion';

export type Preview =
  | { kind: 'none' }
  | { kind: 'pending' }
  | { kind: 'value'; value: Json }
  | { kind: 'no-run' }
  | { kind: 'problem'; code: string; message: string; hint: string | null };

const DELAY = 120;

/** The preview of `text` against `scope` (`null`: no run yet); `none` when not `active` or no template. */
export function useTemplatePreview(text: string, scope: Record<string, Json> | null, active: boolean): Preview {
  const [preview, setPreview] = useState<Preview>({ kind: 'none' });
  const wanted = active && hasTemplate(text) && inTauri();
  useEffect(() => {
    if (!wanted) {
      setPreview({ kind: 'none' });
      return;
    }
    let current = true;
    setPreview((p) => (p.kind === 'none' ? { kind: 'pending' } : p));
    const timer = setTimeout(() => {
      backend
        .previewTemplate(text, scope)
        .then((r) => {
          if (!current) return;
          if (r.problem) setPreview({ kind: 'problem', code: r.problem.code, message: r.problem.message, hint: r.problem.hint });
          else if (scope === null) setPreview({ kind: 'no-run' });
          else setPreview({ kind: 'value', value: (r.value ?? null) as Json });
        })
        .catch((e: unknown) => {
          if (current) setPreview({ kind: 'problem', code: 'PREVIEW_FAILED', message: errorMessage(e), hint: null });
        });
    }, DELAY);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [text, scope, wanted]);
  return preview;
}
