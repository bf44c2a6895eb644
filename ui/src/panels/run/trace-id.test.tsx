// @vitest-environment jsdom
// The run's trace id in the Run tab: shown ("Trace <first 8>…", the whole id in the
// title) from `RunStarted` while the run is live and from the envelope after it, copied
// whole by its button through the copy command (the path the studio's webview allows),
// and absent when telemetry was off.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { runStore, type RunEvent } from '../../run';
import { applyEvents, startView } from '../../run/model';
import { settle, tid } from '../../testing/dom';
import { installLayoutStubs } from '../../testing/jsdom';
import { RunPanel } from './RunPanel';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const envelope = (trace_id?: string) => ({
  run_id: 'r1',
  blueprint: 'bp',
  status: 'succeeded' as const,
  output: {},
  summary: { steps: 0, succeeded: 0, failed: 0, skipped: 0, tool_calls: 0 },
  errors: [],
  duration_ms: 3,
  ...(trace_id ? { trace_id } : {}),
});
const started = (trace_id?: string): RunEvent => ({ seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r1', blueprint: 'bp', inputs: {}, ...(trace_id ? { trace_id } : {}) });
const finished = (trace_id?: string): RunEvent => ({ seq: 2, at_ms: 3, type: 'RunFinished', envelope: envelope(trace_id) });

describe('the run model', () => {
  it('takes the trace id from RunStarted, and from the envelope when it has one', () => {
    expect(startView([]).traceId).toBeNull();
    expect(applyEvents(startView([]), [started(TRACE)]).traceId).toBe(TRACE);
    expect(applyEvents(startView([]), [started(TRACE), finished()]).traceId).toBe(TRACE);
    expect(applyEvents(startView([]), [started(), finished(TRACE)]).traceId).toBe(TRACE);
    expect(applyEvents(startView([]), [started(), finished()]).traceId).toBeNull();
  });
});

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;

beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
});

afterEach(async () => {
  runStore.getState().reset();
  await act(async () => root.unmount());
  host.remove();
  vi.restoreAllMocks();
});

async function show(events: RunEvent[]) {
  await act(async () => root.render(<RunPanel />));
  await act(async () => {
    runStore.getState().begin('r1', [], 'live');
    runStore.getState().receive(events);
  });
  await settle();
}

describe('the Run tab', () => {
  it('shows the first 8 digits of the trace while the run is live and after, and copies the whole id', async () => {
    await show([started(TRACE)]);
    const shown = tid('run-trace-id')!;
    expect(shown.textContent).toContain('Trace 4bf92f35…');
    expect(shown.textContent).not.toContain(TRACE);
    expect(shown.title).toContain(TRACE);
    expect(shown.dataset.traceId).toBe(TRACE);

    // The copy command copies what is selected: the whole id, in a field made for it.
    let selected: string | null = null;
    const execCommand = vi.fn((command: string) => {
      const field = document.activeElement as HTMLTextAreaElement;
      selected = command === 'copy' ? field.value.slice(field.selectionStart, field.selectionEnd) : null;
      return true;
    });
    Object.defineProperty(document, 'execCommand', { value: execCommand, configurable: true });
    await act(async () => tid('run-trace-copy')!.click());
    await settle();
    expect(execCommand).toHaveBeenCalledWith('copy');
    expect(selected).toBe(TRACE);
    expect(tid('run-trace-copy')!.textContent).toBe('Copied');
    expect(document.querySelectorAll('textarea')).toHaveLength(0);

    await act(async () => runStore.getState().receive([finished(TRACE)]));
    expect(tid('run-trace-id')!.dataset.traceId).toBe(TRACE);
    expect(tid('run-result')).not.toBeNull();
  });

  it('falls back to the clipboard API when the copy command does nothing', async () => {
    await show([started(TRACE), finished(TRACE)]);
    Object.defineProperty(document, 'execCommand', { value: () => false, configurable: true });
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    await act(async () => tid('run-trace-copy')!.click());
    await settle();
    expect(writeText).toHaveBeenCalledWith(TRACE);
    expect(tid('run-trace-copy')!.textContent).toBe('Copied');
  });

  it('shows nothing when the run has no trace', async () => {
    await show([started(), finished()]);
    expect(tid('run-result')).not.toBeNull();
    expect(tid('run-trace-id')).toBeNull();
  });
});
