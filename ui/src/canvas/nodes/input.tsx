//! `input` steps: what they ask a person, and what answer they take (a value of the
//! schema's type, or Approve / Reject for an approval gate). While a run waits on one,
//! the card shows "waiting for input" (`run.tsx`), and an approval gate's Approve /
//! Reject buttons hang under it (`QuestionBar`).

import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { Json } from '../../doc/types';
import type { InputNode as InputFlowNode } from '../../graph/types';
import { preview, StepCard } from './card';

/** A short word for what the schema asks: `text`, `number`, `yes / no`, `one of 3`, `3 fields`. */
export function answerKind(schema: Json | undefined, approve: boolean | undefined): string {
  if (approve) return 'approve / reject';
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return 'text';
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.length}`;
  switch (schema.type) {
    case 'string':
      return 'text';
    case 'number':
      return 'number';
    case 'integer':
      return 'whole number';
    case 'boolean':
      return 'yes / no';
    case 'object': {
      const n = schema.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties).length : 0;
      return `${n} field${n === 1 ? '' : 's'}`;
    }
    default:
      return typeof schema.type === 'string' ? schema.type : 'a value';
  }
}

export const InputNode = memo(function InputNode({ id, data, selected }: NodeProps<InputFlowNode>) {
  const s = data.step;
  const fields: [string, string][] = [['ask', preview(s.prompt)]];
  if (s.default !== undefined && !s.approve) fields.push(['default', preview(s.default)]);
  return (
    <StepCard
      id={id}
      kind="input"
      data={data}
      selected={selected}
      subtitle={s.approve ? 'approval gate · approve / reject' : `ask a person · ${answerKind(s.schema, s.approve)}`}
      fields={fields}
    />
  );
});
