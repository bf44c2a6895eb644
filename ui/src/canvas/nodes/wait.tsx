//! `wait` steps: how long.

import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { WaitNode as WaitFlowNode } from '../../graph/types';
import { StepCard } from './card';

export const WaitNode = memo(function WaitNode({ id, data, selected }: NodeProps<WaitFlowNode>) {
  return <StepCard id={id} kind="wait" data={data} selected={selected} subtitle={`wait ${String(data.step.ms)} ms`} />;
});
