//! `tool` steps: server/tool and the first arguments.

import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { ToolNode as ToolFlowNode } from '../../graph/types';
import { argPairs, StepCard } from './card';

export const ToolNode = memo(function ToolNode({ id, data, selected }: NodeProps<ToolFlowNode>) {
  const s = data.step;
  return (
    <StepCard
      id={id}
      kind="tool"
      data={data}
      selected={selected}
      subtitle={s.server ? `${s.server} / ${s.tool}` : s.tool}
      fields={argPairs(s.args)}
    />
  );
});
