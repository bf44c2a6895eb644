//! `transform` steps: the value (its first keys when it is an object).

import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { TransformNode as TransformFlowNode } from '../../graph/types';
import { argPairs, StepCard } from './card';

export const TransformNode = memo(function TransformNode({ id, data, selected }: NodeProps<TransformFlowNode>) {
  const v = data.step.value;
  const fields = v !== null && typeof v === 'object' && !Array.isArray(v) ? argPairs(v) : argPairs(v === undefined ? undefined : { value: v });
  return <StepCard id={id} kind="transform" data={data} selected={selected} subtitle="transform" fields={fields} />;
});
