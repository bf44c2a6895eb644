// @vitest-environment jsdom
// The status toast: a success or info message ends when the person goes on working (a
// press anywhere but on the toast), so it never stays over the card being worked on; an
// error or a warning stays until dismissed or replaced.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearStatus, report, statusStore } from '../../backend';
import { tid } from '../../testing/dom';
import { StatusLine } from './StatusLine';

let root: Root;
let host: HTMLElement;
const press = (target: Element) => act(() => void target.dispatchEvent(new Event('pointerdown', { bubbles: true })));

beforeEach(() => {
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
  host = document.body.appendChild(document.createElement('div'));
  root = createRoot(host);
  act(() => root.render(<StatusLine />));
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
  clearStatus();
});

describe('the status toast', () => {
  it('goes at the next press elsewhere after a success; a press on the toast keeps it', () => {
    act(() => report('success', 'approved everything'));
    expect(tid('status')!.textContent).toContain('approved everything');
    press(tid('status')!);
    expect(statusStore.getState().message).toBe('approved everything');
    press(document.body);
    expect(statusStore.getState().message).toBeNull();
    expect(tid('status')!.textContent).toBe('');
  });

  it('keeps an error through presses elsewhere', () => {
    act(() => report('error', 'not saved: 2 errors'));
    press(document.body);
    expect(statusStore.getState().message).toBe('not saved: 2 errors');
  });
});
