//! Estimated card sizes and gaps, used to place steps before the canvas measures them.

/** Estimated node sizes (the CSS gives step nodes this width), used before nodes are measured. */
export const NODE_WIDTH = 240;
export const NODE_HEIGHT = 110;
export const CASE_ROW_HEIGHT = 22;
/** Inside a loop container: room for its header, and padding around the body. */
export const LOOP_HEADER = 72;
export const LOOP_PADDING = 24;
export const LOOP_MIN_WIDTH = NODE_WIDTH + 2 * LOOP_PADDING;
export const LOOP_MIN_HEIGHT = LOOP_HEADER + 80;
export const GAP_X = 80;
export const GAP_Y = 40;
