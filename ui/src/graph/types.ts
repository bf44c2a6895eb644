//! The node and edge types the canvas draws. Node data is a discriminated union by
//! node type (= step kind; `unknown` for kinds the studio does not know).

import type { Edge, MarkerType, Node } from '@xyflow/react';
import type {
  InputStep,
  LoopStep,
  PromptStep,
  ResourceStep,
  Step,
  SwitchStep,
  ToolStep,
  TransformStep,
  WaitStep,
  WorkflowStep,
} from '../doc/types';

/** What every step node carries: the step as written, and its role in its list. */
export type StepNodeData<S> = {
  step: S;
  /** The step this one stands in for when it is a fallback step. */
  fallbackOf: string | null;
  /** The switch routing to this step, if any. */
  switchFrom: string | null;
};

export type ToolNode = Node<StepNodeData<ToolStep>, 'tool'>;
export type ResourceNode = Node<StepNodeData<ResourceStep>, 'resource'>;
export type PromptNode = Node<StepNodeData<PromptStep>, 'prompt'>;
export type TransformNode = Node<StepNodeData<TransformStep>, 'transform'>;
export type SwitchNode = Node<StepNodeData<SwitchStep>, 'switch'>;
export type LoopNode = Node<StepNodeData<LoopStep>, 'loop'>;
export type WorkflowNode = Node<StepNodeData<WorkflowStep>, 'workflow'>;
export type WaitNode = Node<StepNodeData<WaitStep>, 'wait'>;
/** `input` steps: the node type is `ask` (React Flow's own `input` type has default styles). */
export type InputNode = Node<StepNodeData<InputStep>, 'ask'>;
export type UnknownNode = Node<StepNodeData<Step>, 'unknown'>;

export type FlowNode =
  | ToolNode
  | ResourceNode
  | PromptNode
  | TransformNode
  | SwitchNode
  | LoopNode
  | WorkflowNode
  | WaitNode
  | InputNode
  | UnknownNode;
export type FlowNodeType = NonNullable<FlowNode['type']>;

/** What an edge stands for: an `after` dependency (written or implicit), a switch case, or a fallback. */
export type FlowEdgeData =
  | { kind: 'after'; implicit: boolean }
  | { kind: 'case'; caseIndex: number | 'default' }
  | { kind: 'fallback' };
export type FlowEdge = Edge<FlowEdgeData>;

export interface FlowGraph {
  nodes: FlowNode[];
  edges: FlowEdge[];
}

export const ARROW = { type: 'arrowclosed' as MarkerType, width: 16, height: 16 };
/** The arrowhead of an implicit edge: smaller, in the implicit edge's grey. */
export const IMPLICIT_ARROW = { type: 'arrowclosed' as MarkerType, width: 12, height: 12, color: 'var(--edge-implicit)' };

// The card sizes placement estimates with live with the document (`doc/sizes.ts`).
export * from '../doc/sizes';
