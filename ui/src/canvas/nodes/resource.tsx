//! `resource` steps: server and uri.

import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { ResourceNode as ResourceFlowNode } from '../../graph/types';
import { preview, StepCard } from './card';

export const ResourceNode = memo(function ResourceNode({ id, data, selected }: NodeProps<ResourceFlowNode>) {
  const s = data.step;
  return (
    <StepCard id={id} kind="resource" data={data} selected={selected} subtitle={s.server} fields={[['uri', preview(s.uri)]]} />
  );
});
