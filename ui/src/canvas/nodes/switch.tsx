//! `switch` steps: one row and one source handle per case (`case-N`), plus `default`;
//! the generic `out` handle (for steps that name the switch in `after`) stays.
//! In a run, the case a finished switch took is highlighted and the others dimmed
//! (`data-case-state`: taken | not-taken); paused before it, the case it will take
//! (`next`, from the engine's preview). See `switchCases` in `run.tsx`.

import { Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { SwitchNode as SwitchFlowNode } from '../../graph/types';
import { preview, StepCard, StepHandle } from './card';
import { useSwitchCases } from './run';

export const SwitchNode = memo(function SwitchNode({ id, data, selected }: NodeProps<SwitchFlowNode>) {
  const s = data.step;
  const cases = Array.isArray(s.cases) ? s.cases : [];
  const mark = useSwitchCases(id);
  const caseClass = (key: number | 'default') => {
    const m = mark(key);
    return m ? ` is-${m}` : '';
  };
  return (
    <StepCard id={id} kind="switch" data={data} selected={selected} subtitle="switch" outHandle={false}>
      <ol className="switch-cases">
        <li className="switch-case is-out" title="steps that name this switch in `after` run once it has routed">
          <span className="case-label">then</span>
          <StepHandle id={id} handle="out" type="source" position={Position.Right} />
        </li>
        {cases.map((c, i) => (
          <li key={i} className={`switch-case${caseClass(i)}`} title={c?.when} data-testid={`case-${id}-${i}`} data-case-state={mark(i) ?? ''}>
            <span className="case-label">{i}</span>
            <span className="case-when">{preview(c?.when, 36)}</span>
            <StepHandle id={id} handle={`case-${i}`} type="source" position={Position.Right} className="handle-case" />
          </li>
        ))}
        <li className={`switch-case is-default${caseClass('default')}`} data-testid={`case-${id}-default`} data-case-state={mark('default') ?? ''}>
          <span className="case-label">default</span>
          <StepHandle id={id} handle="default" type="source" position={Position.Right} className="handle-case" />
        </li>
      </ol>
    </StepCard>
  );
});
