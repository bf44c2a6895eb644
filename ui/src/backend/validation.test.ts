// Validation while editing: debounced, and only the latest request's answer lands.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDocStore, type DocStore } from '../doc/store';
import type { Blueprint, Diagnostic } from '../doc/types';
import { deferred } from './mock-backend';
import { clearStatus, report, statusStore } from './status';
import { startValidation } from './validation';

const doc = (name: string): Blueprint => ({ blueprint: 1, id: 'v', name, steps: [{ id: 'a', kind: 'wait', ms: 1 }] });
const d = (message: string): Diagnostic => ({ level: 'error', code: 'X', message, pointer: '/steps/0', step: 'a', hint: null });

let store: DocStore;
let requests: { doc: Blueprint; answer: ReturnType<typeof deferred<Diagnostic[]>> }[];
let stop: () => void;
const validate = (doc: Blueprint) => {
  const answer = deferred<Diagnostic[]>();
  requests.push({ doc, answer });
  return answer.promise;
};
const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};
const rename = (name: string) => store.getState().setSettings({ name });

beforeEach(() => {
  vi.useFakeTimers();
  store = createDocStore(doc('start'));
  requests = [];
  stop = startValidation({ store, validate, delay: 300 });
});
afterEach(() => {
  stop();
  vi.useRealTimers();
});

describe('validation while editing', () => {
  it('validates the document at start, after the quiet period', async () => {
    expect(requests).toHaveLength(0);
    vi.advanceTimersByTime(299);
    expect(requests).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(requests).toHaveLength(1);
    requests[0]!.answer.resolve([d('first')]);
    await flush();
    expect(store.getState().diagnostics.map((x) => x.message)).toEqual(['first']);
    expect(store.getState().diagnosticsByStep.a?.errors).toBe(1);
  });

  it('debounces a burst of edits into one request for the last document', async () => {
    vi.advanceTimersByTime(300);
    requests[0]!.answer.resolve([]);
    await flush();
    rename('one');
    vi.advanceTimersByTime(100);
    rename('two');
    vi.advanceTimersByTime(100);
    rename('three');
    vi.advanceTimersByTime(299);
    expect(requests).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.doc.name).toBe('three');
    expect(requests[1]!.doc).toBe(store.getState().doc);
  });

  it('drops an answer that arrives after a newer request (out of order)', async () => {
    vi.advanceTimersByTime(300); // request 0 (start), left pending
    rename('a');
    vi.advanceTimersByTime(300); // request 1
    rename('b');
    vi.advanceTimersByTime(300); // request 2
    expect(requests.map((r) => r.doc.name)).toEqual(['start', 'a', 'b']);
    requests[2]!.answer.resolve([d('for b')]);
    await flush();
    requests[1]!.answer.resolve([d('for a')]);
    requests[0]!.answer.resolve([d('for start')]);
    await flush();
    expect(store.getState().diagnostics.map((x) => x.message)).toEqual(['for b']);
  });

  it('drops an answer for a document that changed while it was being validated', async () => {
    vi.advanceTimersByTime(300);
    rename('edited'); // the next request waits for the quiet period
    requests[0]!.answer.resolve([d('outdated')]);
    await flush();
    expect(store.getState().diagnostics).toEqual([]);
    vi.advanceTimersByTime(300);
    requests[1]!.answer.resolve([d('current')]);
    await flush();
    expect(store.getState().diagnostics.map((x) => x.message)).toEqual(['current']);
  });

  it('validates a newly loaded document, and stops when told', async () => {
    vi.advanceTimersByTime(300);
    store.getState().load(doc('other'));
    vi.advanceTimersByTime(300);
    expect(requests.map((r) => r.doc.name)).toEqual(['start', 'other']);
    stop();
    rename('after stop');
    vi.advanceTimersByTime(1000);
    requests[1]!.answer.resolve([d('late')]);
    await flush();
    expect(requests).toHaveLength(2);
    expect(store.getState().diagnostics).toEqual([]);
  });

  it('validates again when another source of findings changes (`also`)', async () => {
    stop();
    let again: (() => void) | null = null;
    let unsubscribed = false;
    stop = startValidation({
      store,
      validate,
      delay: 300,
      also: (cb) => {
        again = cb;
        return () => (unsubscribed = true);
      },
    });
    vi.advanceTimersByTime(300);
    expect(requests).toHaveLength(1);
    requests[0]!.answer.resolve([]);
    await flush();
    again!();
    vi.advanceTimersByTime(300);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.doc).toBe(store.getState().doc);
    requests[1]!.answer.resolve([d('a tool the server does not have')]);
    await flush();
    expect(store.getState().diagnostics.map((x) => x.message)).toEqual(['a tool the server does not have']);
    stop();
    expect(unsubscribed).toBe(true);
  });

  it('ends an error message about the document once validation finds no error, and not before', async () => {
    vi.advanceTimersByTime(300);
    requests[0]!.answer.resolve([d('broken')]);
    await flush();
    report('error', 'not saved: 1 error (see the diagnostics)', 'document');
    rename('still broken');
    vi.advanceTimersByTime(300);
    requests[1]!.answer.resolve([d('broken')]);
    await flush();
    expect(statusStore.getState().message).toBe('not saved: 1 error (see the diagnostics)');
    rename('fixed');
    vi.advanceTimersByTime(300);
    requests[2]!.answer.resolve([{ ...d('only a warning'), level: 'warning' }]);
    await flush();
    expect(statusStore.getState().message).toBeNull();
  });

  it('keeps an error message about something else when the document has no error', async () => {
    report('error', 'could not list the runs: the service is gone');
    vi.advanceTimersByTime(300);
    requests[0]!.answer.resolve([]);
    await flush();
    expect(statusStore.getState().message).toBe('could not list the runs: the service is gone');
    clearStatus();
  });

  it('ends the validation failure message once validation works again', async () => {
    vi.advanceTimersByTime(300);
    requests[0]!.answer.reject(new Error('the backend is gone'));
    await flush();
    expect(statusStore.getState().message).toMatch(/^validation failed: /);
    rename('again');
    vi.advanceTimersByTime(300);
    requests[1]!.answer.resolve([]);
    await flush();
    expect(statusStore.getState().message).toBeNull();
  });
});
