// Runs that ask people (recorded: fixtures/people*.ndjson): a step waits for input with
// its question, goes back to running when answered, keeps the answer; a server's
// question during a call; an approval gate rejected; questions inside a loop.

import { describe, expect, it } from 'vitest';
import { fixture } from './fixtures/load';
import { openQuestions, replay, shownState, stepsRunning, STATE_LABELS } from './model';
import { eventText } from './timeline';

const at = (name: 'people' | 'people-loop', seq: number) => {
  const f = fixture(name);
  return replay(f.stepIds, f.events, seq, { parents: f.parents });
};
const seqOf = (name: 'people' | 'people-loop', type: string, step: string, nth = 0) =>
  fixture(name).events.filter((e) => e.type === type && 'step' in e && e.step === step)[nth]!.seq;

describe('a step waiting for a person', () => {
  it('an input step waits with its question, pre-filled default and all', () => {
    const v = at('people', seqOf('people', 'StepWaiting', 'who'));
    const who = v.nodes.who!;
    expect(who.state).toBe('waiting');
    expect(shownState(v, 'who', who)).toBe('waiting');
    expect(STATE_LABELS.waiting).toBe('waiting for input');
    expect(who.question).toMatchObject({ id: 'q1', asking: 'input', message: 'Who is asking?', default: { value: 'Ada' } });
    expect(who.question!.schema).toMatchObject({ type: 'object', required: ['value'] });
    expect(openQuestions(v)).toEqual([{ step: 'who', path: [], question: who.question }]);
    // Nothing animates into a step that waits for a person.
    expect(stepsRunning(v)).not.toContain('who');
    expect(v.status).toBe('running');
  });

  it('answered, it runs again without its question and keeps the answer', () => {
    const v = at('people', seqOf('people', 'StepAnswered', 'who'));
    const who = v.nodes.who!;
    expect(who.state).toBe('running');
    expect(who.question).toBeNull();
    expect(who.answer).toMatchObject({ action: 'accept', content: { value: 'Grace' } });
    expect(openQuestions(v)).toEqual([]);
    const done = at('people', seqOf('people', 'StepFinished', 'who'));
    expect(done.nodes.who).toMatchObject({ state: 'succeeded', output: 'Grace', question: null, answer: { action: 'accept' } });
  });

  it("a server's question during a call waits on the call's step, naming the server", () => {
    const v = at('people', seqOf('people', 'StepWaiting', 'ask'));
    const ask = v.nodes.ask!;
    expect(ask.state).toBe('waiting');
    expect(ask.question).toMatchObject({ asking: 'elicitation', server: 'everything' });
    expect(Object.keys((ask.question!.schema as { properties: object }).properties)).toContain('name');
    expect(ask.args).toEqual({});
    const after = at('people', seqOf('people', 'StepFinished', 'ask'));
    expect(after.nodes.ask!.state).toBe('succeeded');
    expect(JSON.stringify(after.nodes.ask!.output)).toContain('Ada');
  });

  it('an approval gate rejected fails INPUT_REJECTED; with on_error continue the run is partial', () => {
    const waiting = at('people', seqOf('people', 'StepWaiting', 'gate'));
    expect(waiting.nodes.gate!.question).toMatchObject({ asking: 'approval', message: 'Delete the pods of Grace?' });
    const end = at('people', Infinity);
    expect(end.nodes.gate).toMatchObject({ state: 'failed', error: { code: 'INPUT_REJECTED' }, answer: { action: 'accept', content: { approve: false } }, question: null });
    expect(end.nodes.after!.state).toBe('succeeded');
    expect(end.status).toBe('partial');
    expect(openQuestions(end)).toEqual([]);
  });

  it('inside a loop: the node waits while an iteration waits; each question is open on its own path', () => {
    const first = at('people-loop', seqOf('people-loop', 'StepWaiting', 'rate'));
    const rate = first.nodes.rate!;
    expect(rate.state).toBe('waiting');
    expect(rate.counts).toMatchObject({ waiting: 1, running: 1 });
    expect(rate.instances!['0']!.question).toMatchObject({ message: 'Rate a' });
    expect(openQuestions(first).map((q) => q.path)).toEqual([[0]]);
    // The loop's iteration stays running while its body step waits.
    expect(first.nodes.each!.loop!.iterations['0']).toBe('running');
    const second = at('people-loop', seqOf('people-loop', 'StepWaiting', 'rate', 1));
    expect(openQuestions(second).map((q) => [q.path, q.question.message])).toEqual([[[1], 'Rate b']]);
    expect(second.nodes.rate!.instances!['0']!.answer).toMatchObject({ action: 'accept', content: { value: 4 } });
    const end = at('people-loop', Infinity);
    expect(end.nodes.rate!.state).toBe('succeeded');
    expect(end.nodes.rate!.counts!.waiting).toBe(0);
    expect(end.nodes.each!.output).toEqual([4, 4, 4]);
  });

  it('the timeline says who waits and how it was answered', () => {
    const f = fixture('people');
    const texts = f.events.filter((e) => e.type === 'StepWaiting' || e.type === 'StepAnswered').map((e) => eventText(e));
    expect(texts).toEqual([
      'who waits for input',
      'who answered',
      'ask waits for an answer to everything',
      'ask answered',
      'gate waits for approval',
      'gate answered',
    ]);
  });
});
