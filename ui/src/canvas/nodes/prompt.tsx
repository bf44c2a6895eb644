//! `prompt` steps: server/prompt and the first arguments.

import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { PromptNode as PromptFlowNode } from '../../graph/types';
import { argPairs, StepCard } from './card';

export const PromptNode = memo(function PromptNode({ id, data, selected }: NodeProps<PromptFlowNode>) {
  const s = data.step;
  return (
    <StepCard
      id={id}
      kind="prompt"
      data={data}
      selected={selected}
      subtitle={s.server ? `${s.server} / ${s.prompt}` : s.prompt}
      fields={argPairs(s.args)}
    />
  );
});
