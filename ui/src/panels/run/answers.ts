//! Answering the questions of the run shown: sends an answer (or opens a URL-mode
//! question's page) through the backend, and keeps, per question, whether an answer is
//! on its way and what the backend said when it refused one (`QUESTION_NOT_OPEN`, or
//! `BAD_REQUEST` with the fields that do not fit). The run's events say the rest: a
//! `StepAnswered` closes the question everywhere it is shown. A run this window did not
//! start (an earlier session left it waiting) is answered through the session, which
//! follows the run that goes on (`answerWaiting`).

import { create } from 'zustand';
import { backend, toBackendError, type AnswerInfo } from '../../backend';
import type { Json } from '../../doc/types';
import { runStore, type Question } from '../../run';
import { answerWaiting, useSession } from './session';

export interface AnswerProblem {
  code: string;
  message: string;
}

export interface AnswersState {
  /** Question ids whose answer is on its way. */
  sending: Record<string, true>;
  /** The backend's refusal of the last answer, by question id. */
  problems: Record<string, AnswerProblem>;
  /** Question ids the backend took an answer for (the run's `StepAnswered` closes them next). */
  sent: Record<string, true>;
}

export const useAnswers = create<AnswersState>()(() => ({ sending: {}, problems: {}, sent: {} }));

function without<T>(map: Record<string, T>, key: string): Record<string, T> {
  if (!(key in map)) return map;
  const next = { ...map };
  delete next[key];
  return next;
}

/** Sends `answer` to `question` of the run shown; true when the backend took it. */
export async function sendAnswer(question: Question, answer: AnswerInfo): Promise<boolean> {
  const runId = runStore.getState().runId;
  const id = question.id;
  if (!runId || useAnswers.getState().sending[id] || useAnswers.getState().sent[id]) return false;
  useAnswers.setState((s) => ({ sending: { ...s.sending, [id]: true }, problems: without(s.problems, id) }));
  try {
    if (useSession.getState().waitingRun === runId) await answerWaiting(runId, id, answer);
    else await backend.answerQuestion(runId, id, answer);
    // A resumed run is another run shown now: its questions are its own.
    if (runStore.getState().runId === runId) useAnswers.setState((s) => ({ sent: { ...s.sent, [id]: true } }));
    return true;
  } catch (e) {
    const err = toBackendError(e);
    useAnswers.setState((s) => ({ problems: { ...s.problems, [id]: { code: err.code, message: err.message } } }));
    return false;
  } finally {
    useAnswers.setState((s) => ({ sending: without(s.sending, id) }));
  }
}

export const accept = (q: Question, content: Json) => sendAnswer(q, { action: 'accept', content });
export const decline = (q: Question) => sendAnswer(q, { action: 'decline' });
export const cancel = (q: Question) => sendAnswer(q, { action: 'cancel' });
/** An approval gate: Approve (`{"approve": true}`) or Reject (`false`: the step fails `INPUT_REJECTED`). */
export const approve = (q: Question, yes: boolean) => accept(q, { approve: yes });

/** Opens the page of a URL-mode question in the system browser (the backend reads the URL from the question). */
export async function openQuestionPage(question: Question): Promise<void> {
  const runId = runStore.getState().runId;
  if (!runId) return;
  const id = question.id;
  useAnswers.setState((s) => ({ problems: without(s.problems, id) }));
  try {
    await backend.openQuestionUrl(runId, id);
  } catch (e) {
    const err = toBackendError(e);
    useAnswers.setState((s) => ({ problems: { ...s.problems, [id]: { code: err.code, message: err.message } } }));
  }
}

// Another run shown: what was sent or refused for the last one's questions is forgotten.
runStore.subscribe((now, before) => {
  if (now.runId !== before.runId) useAnswers.setState({ sending: {}, problems: {}, sent: {} });
});
