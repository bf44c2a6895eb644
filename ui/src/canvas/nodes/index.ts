//! The node registry: one component per step kind (module scope, so React Flow
//! never sees a new `nodeTypes` object).

import type { NodeTypes } from '@xyflow/react';
import { InputNode } from './input';
import { LoopNode } from './loop';
import { PromptNode } from './prompt';
import { ResourceNode } from './resource';
import { SwitchNode } from './switch';
import { ToolNode } from './tool';
import { TransformNode } from './transform';
import { UnknownNode } from './unknown';
import { WaitNode } from './wait';
import { WorkflowNode } from './workflow';

export const nodeTypes = {
  tool: ToolNode,
  resource: ResourceNode,
  prompt: PromptNode,
  transform: TransformNode,
  switch: SwitchNode,
  loop: LoopNode,
  workflow: WorkflowNode,
  wait: WaitNode,
  ask: InputNode,
  unknown: UnknownNode,
} satisfies NodeTypes;
