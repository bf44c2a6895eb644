//! A server's request for the model and the answer, in words for the studio (the Run tab,
//! the inspector, a node's tooltip): the conversation as `role: text` lines (the system
//! prompt first), cut to a length that reads at a glance, and the answer's model and text.
//! Works on the events as recorded, which the engine has already bounded (long text cut
//! with `…`, image data replaced by its size, long lists ending `… N more`). Pure.

import type { Json } from './events';

export interface SpokenLine {
  /** `system`, `user`, `assistant`. */
  role: string;
  text: string;
}

/** The answer of the model, as `CreateMessageResult` has it. */
export interface ModelAnswer {
  /** The model that answered (`person` when someone wrote it in the studio). */
  model: string | null;
  text: string;
  stopReason: string | null;
}

/** `text` at most `max` characters, cut with `…`. */
export function cutText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

const isObject = (v: unknown): v is Record<string, Json> => !!v && typeof v === 'object' && !Array.isArray(v);

/** One content block in words: its text, or what it is (`(image, image/png)`). */
function blockText(block: Json): string {
  if (typeof block === 'string') return block;
  if (!isObject(block)) return JSON.stringify(block) ?? '';
  if (typeof block.text === 'string') return block.text;
  const type = typeof block.type === 'string' ? block.type : 'content';
  const mime = typeof block.mimeType === 'string' ? `, ${block.mimeType}` : '';
  return `(${type}${mime})`;
}

function contentText(content: Json | undefined): string {
  if (Array.isArray(content)) return content.map(blockText).join('\n');
  return content === undefined ? '' : blockText(content);
}

/** The request's conversation: the system prompt, then each message, each text cut to `max`. */
export function requestLines(request: Json | undefined, max = 300): SpokenLine[] {
  if (!isObject(request)) return [];
  const out: SpokenLine[] = [];
  if (typeof request.systemPrompt === 'string' && request.systemPrompt) out.push({ role: 'system', text: cutText(request.systemPrompt, max) });
  const messages = Array.isArray(request.messages) ? request.messages : [];
  for (const m of messages) {
    // The engine ends a long list with "… N more".
    if (typeof m === 'string') out.push({ role: '…', text: m });
    else if (isObject(m)) out.push({ role: typeof m.role === 'string' ? m.role : 'user', text: cutText(contentText(m.content), max) });
  }
  return out;
}

/** The last thing the server said to the model (the question, in short), for a tooltip. */
export function lastAsked(request: Json | undefined, max = 160): string | null {
  const lines = requestLines(request, max).filter((l) => l.role !== 'system' && l.role !== '…');
  return lines.length ? lines[lines.length - 1]!.text : null;
}

/** The model's answer out of a `CreateMessageResult`, its text cut to `max`; `null` when it is not one. */
export function modelAnswer(result: Json | undefined, max = 600): ModelAnswer | null {
  if (!isObject(result)) return null;
  return {
    model: typeof result.model === 'string' ? result.model : null,
    text: cutText(contentText(result.content), max),
    stopReason: typeof result.stopReason === 'string' ? result.stopReason : null,
  };
}
