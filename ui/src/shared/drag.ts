//! What the palette drags and the canvas accepts.

/** The drag-and-drop type the palette uses: its data is a JSON step template. */
export const STEP_MIME = 'application/mcpflow-step';
