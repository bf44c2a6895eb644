//! The template editor (issue 33, point 3), as n8n's expression editor: the template on
//! the left, multi-line, with `{{` completion of the names in scope and of the fields of
//! the steps' outputs (their tools' output schemas, else the last run's values); its
//! result on the right, live, against the last run ("no run yet" otherwise); an error
//! as one types; the template reference a click away. Ctrl+Enter or Apply writes the
//! text to the field; Esc or Cancel leaves it as it was. The template is coloured
//! (highlight.ts) and the last run's values sit under it, their keys dragged into it.
//!
//! Test hooks: `template-editor`, `template-editor-input`, `template-editor-apply`,
//! `template-editor-result`, `template-reference-link`, `template-reference`,
//! `template-highlight`, `template-fields`.

import { useContext, useState } from 'react';
import { Modal } from '../files/Modal';
import { useTemplatePreview } from './preview';
import type { ScopeName } from './scope';
import { TemplateFields } from './TemplateFields';
import { TemplateInput } from './TemplateInput';
import { PreviewScope, TemplatePreviewPane } from './TemplatePreview';
import { TemplateReference } from './TemplateReference';

export interface TemplateEditorProps {
  value: string;
  names: readonly ScopeName[];
  title?: string;
  onApply(text: string): void;
  onClose(): void;
}

export function TemplateEditor({ value, names, title, onApply, onClose }: TemplateEditorProps) {
  const [text, setText] = useState(value);
  const [reference, setReference] = useState(false);
  const scope = useContext(PreviewScope);
  const preview = useTemplatePreview(text, scope?.scope ?? null, true);
  const apply = () => {
    onApply(text);
    onClose();
  };
  return (
    <>
      <Modal
        title={title ? `Template — ${title}` : 'Template'}
        onClose={onClose}
        testId="template-editor"
        className="template-editor"
        footer={
          <>
            <button type="button" onClick={onClose} data-testid="template-editor-cancel">
              Cancel
            </button>
            <button type="button" className="primary" onClick={apply} data-testid="template-editor-apply">
              Apply
            </button>
          </>
        }
      >
        <div className="te-grid">
          <div className="te-left">
            <TemplateInput
              multiline
              highlight
              expandable={false}
              value={text}
              onChange={setText}
              onEnter={apply}
              names={names}
              autoFocus
              placeholder="{{ expression }}"
              className="te-input"
              data-testid="template-editor-input"
            />
            <p className="te-help">
              Type <code>{'{{'}</code> for the names in scope and <code>.</code> after a step for its fields. Ctrl+Enter applies.{' '}
              <button type="button" className="link-button" data-testid="template-reference-link" onClick={() => setReference(true)}>
                Template reference
              </button>
            </p>
            <TemplateFields names={names} scope={scope?.scope} />
          </div>
          <TemplatePreviewPane preview={preview} runId={scope?.runId} />
        </div>
      </Modal>
      {reference ? <TemplateReference onClose={() => setReference(false)} /> : null}
    </>
  );
}
