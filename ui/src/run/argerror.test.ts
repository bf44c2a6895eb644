// Which arguments a failed call was about: the pointers in the message of the check
// before sending (each one), the server's own words from the error's `detail`, and —
// for a refusal that names no argument — the resolved arguments checked against the
// tool's schema. The errors are those of a recorded run (fixtures/args-disabled.ndjson).

import { describe, expect, it } from 'vitest';
import { argumentProblem, checkAllArgs, checkArgs, issuesText, parseIssues } from './argerror';
import type { StepError, StepFinishedEvent } from './events';
import { extraFixture } from './fixtures/load';

const SUM = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };

/** The recorded `StepFinished` of a step of the args-disabled run. */
function finished(step: string): StepFinishedEvent {
  const ev = extraFixture('args-disabled').events.find((e): e is StepFinishedEvent => e.type === 'StepFinished' && e.step === step);
  if (!ev) throw new Error(`no StepFinished for ${step}`);
  return ev;
}

describe('argumentProblem', () => {
  it('names each argument of the check before sending, in order, with no "server said" (nothing was sent)', () => {
    const ev = finished('sum');
    expect(ev.error!.code).toBe('ARGS_INVALID');
    const p = argumentProblem(ev.error, { a: { x: 1 } }, SUM);
    expect(p).toEqual({
      issues: [
        { pointer: '/a', message: 'expected number, got object' },
        { pointer: '/b', message: 'required, missing' },
      ],
      more: 0,
      why: 'the arguments of tool `add` on server `echo` do not fit its input schema; the call was not sent',
      server: null,
      source: 'message',
    });
    expect(issuesText(p!)).toBe('/a: expected number, got object; /b: required, missing');
    expect(issuesText(p!, 1)).toBe('/a: expected number, got object (+1 more)');
  });

  it('takes "server said" from the detail of a server’s refusal, and says so even when no argument can be pointed at', () => {
    const ev = finished('refused');
    expect(ev.error).toMatchObject({ code: 'ARGS_INVALID', detail: 'failed to deserialize parameters: invalid type: map, expected f64' });
    // The resolved arguments fit the tool's schema: no argument to point at.
    const schema = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] };
    expect(argumentProblem(ev.error, { message: 'x' }, schema)).toBeNull();
    // With arguments that break the schema, those are pointed at, and the server's text is the detail (not our message).
    const refusal: StepError = { ...ev.error!, message: "tool `add` refused its arguments; check them against its input schema (the server's own words are in the detail)" };
    expect(argumentProblem(refusal, { a: { x: 1 }, b: 2 }, SUM)).toEqual({
      issues: [{ pointer: '/a', message: 'expected number, got object' }],
      more: 0,
      why: null,
      server: 'failed to deserialize parameters: invalid type: map, expected f64',
      source: 'schema',
    });
    // JSON-RPC's -32602, said in our words by the pool.
    const rpc: StepError = {
      code: 'ARGS_INVALID',
      message: "server `echo` refused the arguments (invalid params); check them against the tool's input schema",
      detail: 'Invalid params: missing field `b`',
    };
    expect(argumentProblem(rpc, { a: 1 }, SUM)).toMatchObject({ issues: [{ pointer: '/b', message: 'required, missing' }], server: 'Invalid params: missing field `b`' });
  });

  it('points at the argument of an older run’s TOOL_ERROR in the server’s words, its message kept as what the server said', () => {
    const server = 'failed to deserialize parameters: invalid type: map, expected f64';
    expect(argumentProblem({ code: 'TOOL_ERROR', message: server }, { a: { x: 1 }, b: 2 }, SUM)).toEqual({
      issues: [{ pointer: '/a', message: 'expected number, got object' }],
      more: 0,
      why: null,
      server,
      source: 'schema',
    });
  });

  it('says nothing for errors that are not about arguments', () => {
    expect(argumentProblem({ code: 'TOOL_ERROR', message: 'failure 1 of 9 for boom' }, { a: 1, b: 2 }, SUM)).toBeNull();
    expect(argumentProblem({ code: 'SERVER_START_FAILED', message: '/usr/bin/node: not found' })).toBeNull();
    expect(argumentProblem(null)).toBeNull();
    // Arguments that fit the schema: the server's refusal is not pinned on one.
    expect(argumentProblem({ code: 'TOOL_ERROR', message: 'invalid params' }, { a: 1, b: 2 }, SUM)).toBeNull();
  });
});

describe('parseIssues', () => {
  it('reads the list of the check before sending: the root as the empty pointer, the count of the rest, `; ` inside a problem', () => {
    const msg =
      '/: additional property "c" is not allowed; /a/0/b~1c: "x" is not one of ["y"; "z"]; /d: required, missing; and 2 more (the arguments of tool `t` on server `s` do not fit its input schema; the call was not sent)';
    expect(parseIssues(msg)).toEqual({
      issues: [
        { pointer: '', message: 'additional property "c" is not allowed' },
        { pointer: '/a/0/b~1c', message: '"x" is not one of ["y"; "z"]' },
        { pointer: '/d', message: 'required, missing' },
      ],
      more: 2,
      why: 'the arguments of tool `t` on server `s` do not fit its input schema; the call was not sent',
    });
    expect(parseIssues('tool `add` refused its arguments; check them')).toBeNull();
  });
});

describe('checkAllArgs', () => {
  it('names every problem, a missing required argument by its own pointer', () => {
    expect(checkAllArgs({ a: { x: 1 } }, SUM)).toEqual([
      { pointer: '/a', message: 'expected number, got object' },
      { pointer: '/b', message: 'required, missing' },
    ]);
    expect(checkArgs({ a: 1 }, SUM)).toEqual({ pointer: '/b', message: 'required, missing' });
    expect(checkArgs({ a: 1, b: 2.5 }, SUM)).toBeNull();
  });
});
