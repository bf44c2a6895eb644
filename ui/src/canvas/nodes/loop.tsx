//! `loop` steps: a container whose body steps are child nodes. The header shows
//! `for_each` or `until`, the loop variable and the concurrency.

import { Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { LoopNode as LoopFlowNode } from '../../graph/types';
import { DiagnosticBadge, DisabledTag, preview, StepHandle, ValueText } from './card';
import { KindIcon } from './icons';
import { BreakpointToggle, LoopRun, RunStatus, useRunClass, useNodeRun } from './run';
import { StepTitle } from './title';

export const LoopNode = memo(function LoopNode({ id, data, selected }: NodeProps<LoopFlowNode>) {
  const s = data.step;
  const until = s.until !== undefined;
  const extras = [
    s.as ? `as ${s.as}` : null,
    typeof s.concurrency === 'number' && s.concurrency > 1 ? `${s.concurrency} at a time` : null,
    typeof s.max_iterations === 'number' ? `max ${s.max_iterations}` : null,
    typeof s.delay_ms === 'number' ? `every ${s.delay_ms} ms` : null,
  ].filter(Boolean);
  const run = useNodeRun(id);
  const runClass = useRunClass(id, run);
  const disabled = s.disabled === true;
  return (
    <div
      className={`loop-container kind-loop${selected ? ' is-selected' : ''}${disabled ? ' is-disabled' : ''}${runClass}`}
      data-testid={`step-${id}`}
      data-kind="loop"
      title={s.note}
    >
      <StepHandle id={id} handle="in" type="target" position={Position.Left} />
      <div className="loop-head">
        <div className="step-head">
          <BreakpointToggle id={id} />
          <KindIcon kind="loop" />
          <StepTitle id={id} name={s.name} />
          {s.name ? <span className="step-id">{s.id}</span> : null}
          {disabled && <DisabledTag />}
          <DiagnosticBadge id={id} />
        </div>
        <div className="loop-over">
          <span className="loop-label">{until ? 'until' : 'for each'}</span>{' '}
          {until ? <code className="val-expr">{preview(s.until, 56)}</code> : <ValueText value={s.for_each} max={56} testId={`loop-over-${id}`} />}
          {extras.length > 0 && <span className="loop-extras"> · {extras.join(' · ')}</span>}
        </div>
        {run && (
          <div className="loop-run-bar">
            <RunStatus id={id} node={run} />
            <LoopRun id={id} node={run} />
          </div>
        )}
      </div>
      <StepHandle id={id} handle="out" type="source" position={Position.Right} />
      <StepHandle id={id} handle="fallback" type="source" position={Position.Bottom} className="handle-fallback" />
    </div>
  );
});
