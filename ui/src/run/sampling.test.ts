// A server's request for the model and its answer in words (run/sampling.ts), and how the
// run's view follows them (model.ts): the step is shown "asking the model" while a
// request is open, each request is kept with its answer.

import { describe, expect, it } from 'vitest';
import type { RunEvent } from './events';
import { applyEvents, shownState, startView, STATE_LABELS, stepsRunning } from './model';
import { cutText, lastAsked, modelAnswer, requestLines } from './sampling';
import { eventText } from './timeline';

const request = {
  messages: [
    { role: 'user', content: { type: 'text', text: 'Resource trigger-sampling-request context: a haiku about sled' } },
    { role: 'assistant', content: [{ type: 'text', text: 'first' }, { type: 'image', data: '(10000 bytes of base64)', mimeType: 'image/png' }] },
    '… 36 more',
  ],
  systemPrompt: 'You are a helpful test server.',
  maxTokens: 40,
};
const result = { role: 'assistant', content: { type: 'text', text: 'loopback says: a haiku' }, model: 'loopback-model', stopReason: 'endTurn' };

describe('a request for the model in words', () => {
  it('lists the system prompt, then each message with its role; images by type; the cut list as is', () => {
    expect(requestLines(request)).toEqual([
      { role: 'system', text: 'You are a helpful test server.' },
      { role: 'user', text: 'Resource trigger-sampling-request context: a haiku about sled' },
      { role: 'assistant', text: 'first\n(image, image/png)' },
      { role: '…', text: '… 36 more' },
    ]);
    expect(lastAsked(request)).toBe('first\n(image, image/png)');
    expect(requestLines('not a request')).toEqual([]);
  });

  it('cuts long text with an ellipsis', () => {
    expect(cutText('abcdef', 4)).toBe('abc…');
    expect(cutText('abc', 4)).toBe('abc');
    const long = { messages: [{ role: 'user', content: { type: 'text', text: 'x'.repeat(1000) } }] };
    const [line] = requestLines(long, 50);
    expect(line!.text).toHaveLength(50);
    expect(line!.text.endsWith('…')).toBe(true);
  });

  it('reads the answer: model, text, stop reason', () => {
    expect(modelAnswer(result)).toEqual({ model: 'loopback-model', text: 'loopback says: a haiku', stopReason: 'endTurn' });
    expect(modelAnswer(undefined)).toBeNull();
  });
});

const ev = (seq: number, e: Record<string, unknown>) => ({ seq, at_ms: seq * 10, ...e }) as unknown as RunEvent;

describe('a step whose server asks the model', () => {
  const events: RunEvent[] = [
    ev(1, { type: 'RunStarted', run_id: 'r', blueprint: 'b', inputs: {} }),
    ev(2, { type: 'StepStarted', step: 'haiku', path: [], attempt: 1 }),
    ev(3, { type: 'StepSampling', step: 'haiku', path: [], server: 'everything', request }),
    ev(4, { type: 'StepSampled', step: 'haiku', path: [], server: 'everything', result }),
    ev(5, { type: 'StepFinished', step: 'haiku', path: [], status: 'succeeded', output: 'ok', attempts: 1, duration_ms: 30 }),
  ];
  const at = (seq: number) => applyEvents(startView(['haiku']), events.filter((e) => e.seq <= seq));

  it('is shown asking the model while the request is open, and still counts as running', () => {
    const v = at(3);
    const node = v.nodes.haiku!;
    expect(node.state).toBe('running');
    expect(node.sampling).toMatchObject({ server: 'everything', request, atMs: 30, open: 1 });
    expect(shownState(v, 'haiku', node)).toBe('sampling');
    expect(STATE_LABELS.sampling).toBe('asking the model');
    expect(stepsRunning(v)).toContain('haiku');
    expect(v.samples).toEqual([{ seq: 3, step: 'haiku', path: [], server: 'everything', request, atMs: 30, answer: null }]);
  });

  it('answered, it is running again and the exchange keeps the answer', () => {
    const v = at(4);
    expect(v.nodes.haiku!.sampling).toBeNull();
    expect(shownState(v, 'haiku', v.nodes.haiku!)).toBe('running');
    expect(v.samples[0]!.answer).toEqual({ result, error: null, atMs: 40 });
    const done = at(5);
    expect(shownState(done, 'haiku', done.nodes.haiku!)).toBe('succeeded');
    expect(done.samples).toHaveLength(1);
  });

  it('a refusal is kept with its code, and two requests at once stay open until both are answered', () => {
    const refused = { code: 'SAMPLING_NOT_ALLOWED', message: 'server `off` may not' };
    const two: RunEvent[] = [
      ev(1, { type: 'StepStarted', step: 'a', path: [0], attempt: 1 }),
      ev(2, { type: 'StepSampling', step: 'a', path: [0], server: 'off', request }),
      ev(3, { type: 'StepSampling', step: 'a', path: [0], server: 'off', request }),
      ev(4, { type: 'StepSampled', step: 'a', path: [0], server: 'off', error: refused }),
    ];
    const v = applyEvents(startView(['a'], { parents: { a: 'loop' } }), two);
    expect(v.nodes.a!.instances!['0']!.sampling).toMatchObject({ open: 1 });
    expect(v.nodes.a!.sampling).toMatchObject({ open: 1 });
    expect(v.samples.map((x) => x.answer?.error?.code ?? null)).toEqual([null, 'SAMPLING_NOT_ALLOWED']);
    expect(eventText(two[3]!)).toBe('a: the model did not answer off (iteration 0): SAMPLING_NOT_ALLOWED');
    expect(eventText(two[1]!)).toBe('off asks the model during a (iteration 0)');
  });

  it('leaves the nodes a batch does not touch as they were', () => {
    const before = applyEvents(startView(['haiku', 'other']), events.slice(0, 2));
    const after = applyEvents(before, [events[2]!]);
    expect(after.nodes.other).toBe(before.nodes.other);
    expect(after.nodes.haiku).not.toBe(before.nodes.haiku);
  });
});
