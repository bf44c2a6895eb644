//! The canvas: React Flow over the document, its node components, shortcuts and
//! view commands.

export { Canvas, mergeEdges, mergeNodes, type CanvasProps } from './Canvas';
export { useCanvasCommands, type CanvasCommands } from './commands';
export { nodeTypes } from './nodes';
