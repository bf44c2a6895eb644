//! What a template gives, shown under its field while it is edited and in the template
//! editor: the value against the last run, the error (its code, message and what to
//! do), or "no run yet" when only the syntax could be checked.
//!
//! Test hooks: `template-preview` (`data-kind`: `value` | `problem` | `no-run` | `pending`).

import { createContext } from 'react';
import type { Json } from '../../doc';
import { JsonView } from '../run/JsonView';
import type { Preview } from './preview';

/** The scope previews are computed against; `undefined` outside the inspector (no preview). */
export const PreviewScope = createContext<{ runId: string | null; scope: Record<string, Json> } | null | undefined>(undefined);

function short(value: Json, max = 120): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

export function TemplatePreviewLine({ preview, runId }: { preview: Preview; runId: string | null | undefined }) {
  if (preview.kind === 'none') return null;
  return (
    <div className={`tpl-preview is-${preview.kind}`} data-testid="template-preview" data-kind={preview.kind} aria-live="polite">
      {preview.kind === 'pending' ? (
        <span className="tpl-preview-note">…</span>
      ) : preview.kind === 'no-run' ? (
        <span className="tpl-preview-note">no run yet: the syntax is fine; run the blueprint to see the value</span>
      ) : preview.kind === 'problem' ? (
        <span>
          <code>{preview.code}</code> {preview.message}
          {preview.hint ? <span className="tpl-preview-note"> — {preview.hint}</span> : null}
        </span>
      ) : (
        <span title={runId ? `against run ${runId}` : undefined}>
          <span className="tpl-preview-note">= </span>
          <code className="tpl-preview-value">{short(preview.value)}</code>
        </span>
      )}
    </div>
  );
}

/** The preview at full size (the template editor's right side). */
export function TemplatePreviewPane({ preview, runId }: { preview: Preview; runId: string | null | undefined }) {
  return (
    <div className="te-result" data-testid="template-editor-result" data-kind={preview.kind}>
      <div className="te-result-head">
        Result {runId ? <span className="tpl-preview-note">against the last run ({runId.slice(0, 8)})</span> : <span className="tpl-preview-note">no run yet</span>}
      </div>
      {preview.kind === 'value' ? (
        <JsonView value={preview.value} testId="template-editor-value" />
      ) : preview.kind === 'none' ? (
        <p className="tpl-preview-note">Type a template, e.g. {'{{ inputs.name }}'}: its value shows here.</p>
      ) : (
        <TemplatePreviewLine preview={preview} runId={runId} />
      )}
    </div>
  );
}
