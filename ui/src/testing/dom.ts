//! Driving a mounted studio in jsdom: finding elements (`q`, `tid`), letting promises,
//! effects and short timers run (`settle`), clicking and typing as a person would, and
//! playing a run's events over its Tauri `Channel` as the backend would (`sender`).
//!
//! ```ts
//! await click(tid('run-start'));
//! const send = sender(be.calls('start_run')[0]!.onEvents as ChannelLike);
//! await send(events, true);
//! ```
//!
//! `settle`, `click` and `typeInto` wait 8 turns of 5 ms, enough for the run batcher's
//! frame; `settling(rounds, ms)` makes a set that waits otherwise.

import { act } from 'react';
import { expect } from 'vitest';

/** The first element `sel` matches in the document, or null. */
export const q = (sel: string) => document.querySelector<HTMLElement>(sel);

/** The element with `data-testid="id"`, or null. */
export const tid = (id: string) => q(`[data-testid="${id}"]`);

/**
 * `settle` (inside `act`, lets `rounds` turns of the event loop `ms` apart run), and
 * `click` and `typeInto`, which settle that way after acting on an element that must
 * be there.
 */
export function settling(rounds = 8, ms = 5) {
  const settle = () =>
    act(async () => {
      for (let i = 0; i < rounds; i++) await new Promise((r) => setTimeout(r, ms));
    });
  const click = async (el: HTMLElement | null) => {
    expect(el).not.toBeNull();
    await act(async () => el!.click());
    await settle();
  };
  /** Types into a React-controlled input or textarea as a person would (the native setter, then `input`). */
  const typeInto = async (el: HTMLElement | null, text: string) => {
    expect(el).not.toBeNull();
    const input = el as HTMLInputElement | HTMLTextAreaElement;
    const proto = input instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    await act(async () => {
      Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(input, text);
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await settle();
  };
  return { settle, click, typeInto };
}

export const { settle, click, typeInto } = settling();

/** What a command gets for a `Channel` argument under `mockIPC` (`onEvents`): its callback's id. */
export interface ChannelLike {
  id: number;
}

/** Delivers batches of run events on `channel`, numbered in order, as Tauri would (outside `act`). */
export function channelSender(channel: ChannelLike): (events: readonly unknown[], done?: boolean) => void {
  let index = 0;
  const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback(id: number, data: unknown): void } }).__TAURI_INTERNALS__;
  return (events, done = false) => internals.runCallback(channel.id, { index: index++, message: { events, lagged: 0, done } });
}

/** `channelSender` inside `act`, for a mounted studio: `await send(events)`, `await send(last, true)`. */
export function sender(channel: ChannelLike): (events: readonly unknown[], done?: boolean) => Promise<void> {
  const send = channelSender(channel);
  return (events, done = false) =>
    act(async () => {
      send(events, done);
    });
}
