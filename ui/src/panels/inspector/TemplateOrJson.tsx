//! A field that is usually one template string but may be any JSON (`collect`,
//! `output`): a template input, or a JSON editor when the value is not a string.

import { useEffect, useState } from 'react';
import type { Json } from '../../doc';
import { JsonField } from './CodeEditor';
import type { ScopeName } from './scope';
import { TemplateField } from './TemplateInput';

export interface TemplateOrJsonProps {
  value: Json | undefined;
  onCommit(v: Json | undefined): void;
  names?: readonly ScopeName[];
  id?: string;
  placeholder?: string;
  'data-testid'?: string;
}

export function TemplateOrJson({ value, onCommit, names, id, placeholder, ...rest }: TemplateOrJsonProps) {
  const isText = value === undefined || typeof value === 'string';
  const [json, setJson] = useState(!isText);
  useEffect(() => {
    if (!isText) setJson(true);
  }, [isText]);
  return (
    <div className="tpl-or-json">
      <div className="tpl-or-json-bar">
        <button
          type="button"
          className={`mini-toggle${json ? '' : ' is-on'}`}
          aria-pressed={!json}
          onClick={() => setJson(false)}
          disabled={!json || !isText}
          title={isText ? 'Edit as one template' : 'The value is JSON; clear it to write a template'}
        >
          template
        </button>
        <button type="button" className={`mini-toggle${json ? ' is-on' : ''}`} aria-pressed={json} onClick={() => setJson(true)}>
          JSON
        </button>
      </div>
      {json ? (
        <JsonField value={value} onCommit={onCommit} names={names} id={id} data-testid={rest['data-testid']} placeholder={placeholder} />
      ) : (
        <TemplateField
          id={id}
          value={typeof value === 'string' ? value : undefined}
          onCommit={onCommit}
          names={names}
          placeholder={placeholder ?? '{{ expression }}'}
          data-testid={rest['data-testid']}
        />
      )}
    </div>
  );
}
