//! A field that holds either a fixed JSON value of the type it wants (a list, an
//! object, a number, a boolean) or an expression (`{{ … }}`), with a visible
//! Fixed / Expression switch, as n8n's parameters have (issue 33, point 1).
//!
//! - Fixed: the value typed as JSON (`["ada","grace","linus"]`), read when it commits;
//!   text of another type is shown as a problem and not committed. The value is shown
//!   under the field as chips.
//! - Expression: a template field with completion. Text typed there that is not a
//!   template but reads as JSON of the wanted type is stored as that value (and the
//!   field shows Fixed): what people type is taken as they mean it.
//! - Switching Fixed → Expression keeps the value as a JMESPath literal template;
//!   Expression → Fixed reads such a literal back, and clears any other expression.

import { useEffect, useState } from 'react';
import type { Json } from '../../doc';
import { TextInput } from './fields';
import type { ScopeName } from './scope';
import { TemplateField } from './TemplateInput';
import { literalOf, literalTemplate, parseTyped, typedProblem, typeOf, type JsonType } from './typed';

export interface FixedOrExpressionProps {
  value: Json | undefined;
  wants: readonly JsonType[];
  onCommit(v: Json | undefined): void;
  names?: readonly ScopeName[];
  id?: string;
  /** Placeholders of the two modes. */
  fixedPlaceholder?: string;
  expressionPlaceholder?: string;
  'data-testid'?: string;
}

function modeOf(v: Json | undefined): 'fixed' | 'expression' {
  return v !== undefined && typeof v !== 'string' ? 'fixed' : 'expression';
}

export function FixedOrExpression({ value, wants, onCommit, names, id, fixedPlaceholder, expressionPlaceholder, ...rest }: FixedOrExpressionProps) {
  const testId = rest['data-testid'];
  const [mode, setMode] = useState(modeOf(value));
  // A value from outside (undo, another step) shows in its own mode.
  useEffect(() => {
    if (value !== undefined) setMode(modeOf(value));
  }, [value]);
  const toFixed = () => {
    if (mode === 'fixed') return;
    setMode('fixed');
    if (typeof value === 'string') onCommit(literalOf(value));
  };
  const toExpression = () => {
    if (mode === 'expression') return;
    setMode('expression');
    if (value !== undefined && typeof value !== 'string') onCommit(literalTemplate(value));
  };
  return (
    <div className="fixed-or-expr" data-mode={mode} data-testid={testId ? `${testId}-field` : undefined}>
      <div className="insp-segmented fx-switch" role="radiogroup" aria-label="Fixed value or expression">
        <button type="button" role="radio" aria-checked={mode === 'fixed'} className={mode === 'fixed' ? 'is-on' : ''} data-testid={testId ? `${testId}-fixed` : undefined} onClick={toFixed} title="A fixed value, typed as JSON">
          Fixed
        </button>
        <button
          type="button"
          role="radio"
          aria-checked={mode === 'expression'}
          className={mode === 'expression' ? 'is-on' : ''}
          data-testid={testId ? `${testId}-expression` : undefined}
          onClick={toExpression}
          title="An expression: {{ template }} computed when the step runs"
        >
          Expression
        </button>
      </div>
      {mode === 'fixed' ? (
        <>
          <TextInput
            id={id}
            data-testid={testId}
            value={value !== undefined && typeof value !== 'string' ? JSON.stringify(value) : undefined}
            placeholder={fixedPlaceholder}
            validate={(t) => typedProblem(t, wants)}
            onCommit={(t) => onCommit(t === undefined ? undefined : (parseTyped(t, wants) ?? undefined))}
          />
          <FixedChips value={value} />
        </>
      ) : (
        <TemplateField
          id={id}
          data-testid={testId}
          value={typeof value === 'string' ? value : undefined}
          names={names}
          placeholder={expressionPlaceholder ?? '{{ expression }}'}
          onCommit={(t) => {
            const typed = t === undefined ? null : parseTyped(t, wants);
            if (typed !== null) setMode('fixed');
            onCommit(typed ?? t);
          }}
        />
      )}
    </div>
  );
}

/** A fixed value under its field: a list's items as chips, else its type and text. */
function FixedChips({ value }: { value: Json | undefined }) {
  if (value === undefined || typeof value === 'string') return null;
  if (Array.isArray(value)) {
    return (
      <div className="fx-chips" data-testid="fixed-chips" aria-label={`a list of ${value.length}`}>
        <span className="fx-count">
          list · {value.length} item{value.length === 1 ? '' : 's'}
        </span>
        {value.slice(0, 12).map((v, i) => (
          <span key={i} className="chip fx-chip">
            {typeof v === 'string' ? v : JSON.stringify(v)}
          </span>
        ))}
        {value.length > 12 ? <span className="fx-count">+{value.length - 12}</span> : null}
      </div>
    );
  }
  return (
    <div className="fx-chips" data-testid="fixed-chips">
      <span className="fx-count">{typeOf(value)}</span>
    </div>
  );
}
