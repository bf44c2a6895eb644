// @vitest-environment jsdom
// Questions of a live run in the studio shell, against a fake backend (mockIPC) and the
// events of a real run (run/fixtures/people.ndjson): the waiting node, the notification
// that selects it, the form built from the question's schema in the inspector (filled
// and accepted, or refused by the form's own check, or by the backend), an approval
// gate answered from the node, URL mode sending no URL of its own, and a finished or
// past run offering no form.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { commandError, mockBackend, type MockBackend } from '../../backend/mock-backend';
import { docStore } from '../../doc/store';
import { runShape, runStore, type RunEvent } from '../../run';
import { fixture } from '../../run/fixtures/load';
import { Studio } from '../../Studio';
import { click, q, settle, tid, typeInto } from '../../testing/dom';
import { installLayoutStubs } from '../../testing/jsdom';
import { initialServersState, serversStore } from '../servers';
import { useAnswers } from './answers';
import { closeRun, useSession } from './session';

beforeAll(installLayoutStubs);

const PEOPLE = fixture('people');
let root: Root;
let host: HTMLElement;
let be: MockBackend;

/** The live run of the people fixture, up to (and with) the event `upto`. */
async function liveUpTo(upto: (e: RunEvent) => boolean, events: readonly RunEvent[] = PEOPLE.events) {
  const { stepIds, parents } = runShape(PEOPLE.blueprint);
  const cut = events.findIndex(upto);
  await act(async () => {
    runStore.getState().begin('run-1', stepIds, 'live', { parents });
    runStore.getState().receive(events.slice(0, cut + 1));
  });
  await settle();
}
const waitingOn = (step: string) => (e: RunEvent) => e.type === 'StepWaiting' && e.step === step;

beforeEach(async () => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  be = mockBackend();
  useSession.setState({ active: null, starting: false, debugging: false, history: [], historyFor: null, error: null });
  useAnswers.setState({ sending: {}, problems: {}, sent: {} });
  docStore.getState().load(PEOPLE.blueprint, { id: PEOPLE.blueprint.id, rev: 1 });
  await act(async () => root.render(<Studio validate={false} />));
  await settle();
});

afterEach(async () => {
  closeRun();
  runStore.getState().reset();
  await act(async () => root.unmount());
  host.remove();
  be.stop();
  serversStore.setState(initialServersState());
});

describe('a question of the live run', () => {
  it("a server's form: the node waits, the toast selects it, the form is filled and accepted", async () => {
    await liveUpTo(waitingOn('ask'));
    expect(tid('run-ask')!.dataset.state).toBe('waiting');
    expect(tid('run-ask')!.textContent).toContain('waiting for input');
    expect(tid('step-ask')!.className).toContain('run-waiting');
    expect(tid('run-state')!.dataset.waiting).toBe('true');
    expect(tid('run-state')!.dataset.status).toBe('running');
    const toast = tid('question-toast')!;
    expect(toast.dataset.step).toBe('ask');
    expect(toast.textContent).toContain('server everything');
    await click(toast);
    expect(docStore.getState().selected).toEqual(['ask']);
    const form = tid('question');
    expect(form!.dataset.asking).toBe('elicitation');
    expect(tid('question-message')!.textContent).toContain('Please provide inputs');
    await typeInto(q('#answer_name'), 'Ada Lovelace');
    await click(tid('question-accept'));
    const sent = be.calls('answer_question');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ runId: 'run-1', questionId: 'q2', answer: { action: 'accept', content: { name: 'Ada Lovelace' } } });
    // Sent: no second answer while the run's StepAnswered is on its way.
    expect(tid('question-sent')).not.toBeNull();
    expect((tid('question-accept') as HTMLButtonElement).disabled).toBe(true);
  });

  it("a server's form is pre-filled with its schema's defaults, and fields left as they are send them (SEP-1034)", async () => {
    await liveUpTo(waitingOn('ask'));
    await click(tid('question-toast'));
    expect((q('#answer_firstLine') as HTMLInputElement).value).toBe('It was a dark and stormy night.');
    expect((q('#answer_integer') as HTMLInputElement).value).toBe('42');
    await typeInto(q('#answer_name'), 'Ada Lovelace');
    await click(tid('question-accept'));
    const sent = be.calls('answer_question');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.answer).toMatchObject({
      action: 'accept',
      content: {
        name: 'Ada Lovelace',
        firstLine: 'It was a dark and stormy night.',
        integer: 42,
        number: 3.14,
        untitledSingleSelectEnum: 'Monica',
        untitledMultipleSelectEnum: ['Guitar'],
        titledSingleSelectEnum: 'hero-1',
      },
    });
  });

  it('the form checks its required fields before sending', async () => {
    await liveUpTo(waitingOn('ask'));
    await click(tid('question-toast'));
    expect(tid('question')!.querySelector('.error-detail')).toBeNull();
    await click(tid('question-accept'));
    expect(be.calls('answer_question')).toHaveLength(0);
    expect(tid('question')!.querySelector('.error-detail')?.textContent).toMatch(/required/i);
  });

  it("an input step's form is pre-filled with its default; Decline and Cancel send those actions", async () => {
    await liveUpTo(waitingOn('who'));
    await act(async () => docStore.getState().select(['who']));
    await settle();
    expect((q('#answer_value') as HTMLInputElement).value).toBe('Ada');
    await click(tid('question-decline'));
    expect(be.calls('answer_question').map((c) => c.answer)).toEqual([{ action: 'decline' }]);
    // One answer per question: the others wait for the run to take it away.
    await click(tid('question-cancel'));
    expect(be.calls('answer_question')).toHaveLength(1);
    await act(async () => useAnswers.setState({ sent: {} }));
    await click(tid('question-cancel'));
    expect(be.calls('answer_question').map((c) => c.answer)).toEqual([{ action: 'decline' }, { action: 'cancel' }]);
  });

  it("the backend's refusal is shown with its code, and the question stays open", async () => {
    be.on('answer_question', () => {
      throw commandError('QUESTION_NOT_OPEN', 'run `run-1` waits for no answer');
    });
    await liveUpTo(waitingOn('who'));
    await act(async () => docStore.getState().select(['who']));
    await settle();
    await click(tid('question-accept'));
    expect(tid('question-problem')!.dataset.code).toBe('QUESTION_NOT_OPEN');
    expect(tid('question')).not.toBeNull();
  });

  it('an approval gate is rejected from the node; the answer closes it everywhere', async () => {
    await liveUpTo(waitingOn('gate'));
    expect(tid('run-gate')!.textContent).toContain('waiting for approval');
    expect(tid('node-approve-gate')).not.toBeNull();
    await click(tid('node-reject-gate'));
    expect(be.calls('answer_question')[0]).toMatchObject({ questionId: 'q3', answer: { action: 'accept', content: { approve: false } } });
    // The run's StepAnswered arrives: no more buttons, no toast.
    const answered = PEOPLE.events.find((e) => e.type === 'StepAnswered' && e.step === 'gate')!;
    await act(async () => runStore.getState().receive([answered]));
    await settle();
    expect(tid('node-approve-gate')).toBeNull();
    expect(tid('question-toast')).toBeNull();
    expect(tid('run-state')!.dataset.waiting).toBeUndefined();
  });

  it('URL mode shows the URL as text; Open in browser names the question, never a URL', async () => {
    const waiting: RunEvent = {
      seq: 6,
      at_ms: 10,
      type: 'StepWaiting',
      step: 'ask',
      path: [],
      question: { id: 'q9', step: 'ask', path: [], asking: 'elicitation_url', server: 'everything', message: 'Sign in to continue', url: 'https://example.com/connect?state=abc' },
    };
    const events = [...PEOPLE.events.slice(0, 5), { ...PEOPLE.events[5]!, seq: 5 }, waiting];
    await liveUpTo((e) => e === waiting, events);
    await act(async () => docStore.getState().select(['ask']));
    await settle();
    expect(tid('question-url')!.textContent).toBe('https://example.com/connect?state=abc');
    expect(be.calls('open_question_url')).toHaveLength(0);
    await click(tid('question-open-url'));
    expect(be.calls('open_question_url')).toEqual([{ runId: 'run-1', questionId: 'q9' }]);
    await click(tid('question-done'));
    expect(be.calls('answer_question')[0]).toMatchObject({ questionId: 'q9', answer: { action: 'accept', content: {} } });
  });

  it('a past run offers no form: it says what was answered', async () => {
    const { stepIds, parents } = runShape(PEOPLE.blueprint);
    await act(async () => {
      runStore.getState().begin('run-1', stepIds, 'history', { parents });
      runStore.getState().receive(PEOPLE.events);
      docStore.getState().select(['gate']);
    });
    await settle();
    expect(tid('question')).toBeNull();
    expect(tid('question-toast')).toBeNull();
    expect(tid('step-run-answer')!.dataset.action).toBe('accept');
    expect(tid('step-run-error')!.dataset.code).toBe('INPUT_REJECTED');
  });
});
