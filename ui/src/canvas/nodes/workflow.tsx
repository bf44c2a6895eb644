//! `workflow` steps: the sub-workflow and the first arguments.

import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { WorkflowNode as WorkflowFlowNode } from '../../graph/types';
import { argPairs, StepCard } from './card';

export const WorkflowNode = memo(function WorkflowNode({ id, data, selected }: NodeProps<WorkflowFlowNode>) {
  const s = data.step;
  return (
    <StepCard id={id} kind="workflow" data={data} selected={selected} subtitle={`workflow ${s.workflow}`} fields={argPairs(s.args)} />
  );
});
