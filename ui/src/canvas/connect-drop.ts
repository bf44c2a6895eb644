//! An edge dragged from a handle and let go on a card, not on its small "in" handle: the
//! card under the pointer is the target, as n8n takes a connection dropped anywhere on a
//! node (React Flow alone lets the edge spring back there: a dead end of the walk-through).

/** The id of the step card under the pointer where a drag ended, if any. */
export function cardUnder(event: MouseEvent | TouchEvent): string | null {
  const point = 'changedTouches' in event ? event.changedTouches[0] : event;
  if (!point) return null;
  // Every element under the point: the connection line's own end lies over the card.
  for (const el of document.elementsFromPoint(point.clientX, point.clientY)) {
    const card = el.closest('.react-flow__node');
    if (card) return card.getAttribute('data-id');
  }
  return null;
}
