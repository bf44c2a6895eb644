//! Steps of a kind the studio does not know: shown, kept, never edited away.

import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { UnknownNode as UnknownFlowNode } from '../../graph/types';
import { StepCard } from './card';

export const UnknownNode = memo(function UnknownNode({ id, data, selected }: NodeProps<UnknownFlowNode>) {
  return <StepCard id={id} kind="unknown" data={data} selected={selected} subtitle={`unknown kind "${String(data.step.kind)}"`} />;
});
