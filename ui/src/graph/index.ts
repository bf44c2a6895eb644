//! The blueprint ⇄ graph mapping: nodes and edges derived from the document, the
//! fallback placement, and elkjs auto-layout.

export { docToGraph, nodeTypeOf, sameEdge, sameNode, type GraphOptions } from './doc-to-graph';
export { computeAutoLayout, type NodeSizes } from './auto-layout';
export { estimateSize, placeAll, type MeasuredSizes, type Placed } from '../doc/placement';
export * from './types';
