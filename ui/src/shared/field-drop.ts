//! Drag a field of a step's output into a template field (issue 33, point 3, as n8n's
//! drag from the input panel): what the drag carries and where in the text it lands.

/** The drag type of an output field; its data is the template to insert, `{{ step.path }}`. */
export const FIELD_MIME = 'application/mcpflow-field';

/**
 * The template for the field at `path` of `step`'s output, in the short form completion
 * offers: `{{ fetch.items[0].name }}`; keys that are not identifiers are quoted
 * (`fetch."content-type"`), as JMESPath wants.
 */
export function fieldTemplate(step: string, path: readonly (string | number)[]): string {
  let out = step;
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(p)) out += `.${p}`;
    else out += `.${JSON.stringify(p)}`;
  }
  return `{{ ${out} }}`;
}

/**
 * The offset in `el`'s text under the window point (x, y): a mirror of the field with
 * the same box and font is laid over it for a moment and asked for the caret position
 * there. Null where the engine cannot say (no layout, as in jsdom).
 */
export function offsetAtPoint(el: HTMLInputElement | HTMLTextAreaElement, x: number, y: number): number | null {
  const doc = el.ownerDocument;
  const from = (doc as Document & { caretRangeFromPoint?(x: number, y: number): Range | null }).caretRangeFromPoint;
  if (typeof from !== 'function') return null;
  const box = el.getBoundingClientRect();
  if (box.width === 0 && box.height === 0) return null;
  const style = getComputedStyle(el);
  const mirror = doc.createElement('div');
  for (const k of ['boxSizing', 'padding', 'border', 'fontFamily', 'fontSize', 'fontWeight', 'letterSpacing', 'lineHeight', 'tabSize'] as const) {
    mirror.style[k] = style[k];
  }
  Object.assign(mirror.style, {
    position: 'fixed',
    left: `${box.left}px`,
    top: `${box.top - el.scrollTop}px`,
    width: `${box.width}px`,
    minHeight: `${box.height + el.scrollTop}px`,
    whiteSpace: el instanceof HTMLTextAreaElement ? 'pre-wrap' : 'pre',
    overflowWrap: 'break-word',
    opacity: '0',
    zIndex: '2147483647',
    marginLeft: `${-el.scrollLeft}px`,
  });
  const text = doc.createTextNode(el.value);
  mirror.appendChild(text);
  doc.body.appendChild(mirror);
  try {
    const r = from.call(doc, x, y);
    return r && r.startContainer === text ? Math.min(r.startOffset, el.value.length) : el.value.length;
  } finally {
    mirror.remove();
  }
}
