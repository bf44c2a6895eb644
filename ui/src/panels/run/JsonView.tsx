//! A collapsible JSON viewer for outputs of any size: objects and arrays open on click
//! and draw their first `PAGE` members at a time, so a 50 MB output costs only what is
//! open. The header shows the value's size as JSON.

import { memo, useMemo, useState, type ReactNode } from 'react';
import { FIELD_MIME, fieldTemplate } from '../../shared/field-drop';

const PAGE = 100;

/** The size of `value` written as JSON, for people (`12.3 KB`). */
export function jsonSize(value: unknown): string {
  let n: number;
  try {
    n = new TextEncoder().encode(JSON.stringify(value) ?? '').length;
  } catch {
    return '';
  }
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function scalar(value: unknown): { text: string; cls: string } {
  if (value === null) return { text: 'null', cls: 'json-null' };
  if (typeof value === 'string') return { text: JSON.stringify(value), cls: 'json-string' };
  if (typeof value === 'number') return { text: String(value), cls: 'json-number' };
  if (typeof value === 'boolean') return { text: String(value), cls: 'json-bool' };
  return { text: String(value), cls: '' };
}

/** A key one can drag into a template field, carrying `{{ step.path }}` (see field-drop.ts). */
function DragKey({ step, path, children }: { step: string; path: readonly (string | number)[]; children: ReactNode }) {
  const template = fieldTemplate(step, path);
  return (
    <span
      className="json-key is-draggable"
      draggable
      title={`Drag into a template field: ${template}`}
      data-testid="json-drag-key"
      data-template={template}
      onDragStart={(e) => {
        e.dataTransfer.setData(FIELD_MIME, template);
        e.dataTransfer.setData('text/plain', template);
        e.dataTransfer.effectAllowed = 'copy';
      }}
    >
      {children}
    </span>
  );
}

interface NodeProps {
  name: string | null;
  value: unknown;
  depth: number;
  open: boolean;
  /** The step whose output this is: its keys can be dragged into templates. */
  step?: string;
  path: readonly (string | number)[];
}

const Node = memo(function Node({ name, value, depth, open: startOpen, step, path }: NodeProps) {
  const [open, setOpen] = useState(startOpen);
  const [shown, setShown] = useState(PAGE);
  const label =
    name === null ? null : step ? (
      <>
        <DragKey step={step} path={path}>
          {name}
        </DragKey>
        <span className="json-key">: </span>
      </>
    ) : (
      <span className="json-key">{name}: </span>
    );
  if (value === null || typeof value !== 'object') {
    const s = scalar(value);
    return (
      <div className="json-row" style={{ paddingLeft: depth * 12 }}>
        {label}
        <span className={s.cls}>{s.text}</span>
      </div>
    );
  }
  const array = Array.isArray(value);
  const entries: [string, unknown][] = array ? (value as unknown[]).map((v, i) => [String(i), v]) : Object.entries(value as object);
  const summary = array ? `[${entries.length}]` : `{${entries.length}}`;
  return (
    <>
      <div className="json-row" style={{ paddingLeft: depth * 12 }}>
        <button type="button" className="json-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'}
        </button>
        {label}
        <span className="json-summary">{summary}</span>
      </div>
      {open &&
        entries
          .slice(0, shown)
          .map(([k, v]) => (
            <Node key={k} name={k} value={v} depth={depth + 1} open={false} step={step} path={[...path, array ? Number(k) : k]} />
          ))}
      {open && entries.length > shown && (
        <div className="json-row" style={{ paddingLeft: (depth + 1) * 12 }}>
          <button type="button" className="json-more" onClick={() => setShown(shown + PAGE)}>
            {entries.length - shown} more…
          </button>
        </div>
      )}
    </>
  );
});

export function JsonView({ value, testId, title, step }: { value: unknown; testId?: string; title?: string; step?: string }) {
  const size = useMemo(() => jsonSize(value), [value]);
  const [raw, setRaw] = useState(false);
  return (
    <div className="json-view" data-testid={testId}>
      <div className="json-head">
        {title ? step ? <DragKey step={step} path={[]}><span className="json-title">{title}</span></DragKey> : <span className="json-title">{title}</span> : null}
        <span className="json-size">{size}</span>
        <button type="button" className="json-mode" onClick={() => setRaw(!raw)}>
          {raw ? 'tree' : 'text'}
        </button>
      </div>
      {raw ? (
        <pre className="json-raw">{JSON.stringify(value, null, 2)}</pre>
      ) : (
        <div className="json-tree">
          <Node name={null} value={value} depth={0} open={true} step={step} path={[]} />
        </div>
      )}
    </div>
  );
}
