// Which argument a failed call was about: the pointer in the engine's message, or the
// resolved arguments checked against the tool's schema when the server refused them.

import { describe, expect, it } from 'vitest';
import { argumentProblem, checkArgs } from './argerror';

const SUM = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };

describe('argumentProblem', () => {
  it('takes the JSON pointer from the message of the check before sending', () => {
    expect(argumentProblem({ code: 'ARGS_INVALID', message: '/a: expected number, got object' })).toEqual({
      pointer: '/a',
      message: 'expected number, got object',
      server: null,
    });
    // Words around it are kept as the full text.
    const long = 'the arguments do not match the input schema of `get-sum`: /items/0/name: expected string, got number';
    expect(argumentProblem({ code: 'ARGS_INVALID', message: long })).toEqual({ pointer: '/items/0/name', message: 'expected string, got number', server: long });
  });

  it('points at the argument when the server refused it in its own words', () => {
    const server = 'failed to deserialize parameters: invalid type: map, expected f64';
    expect(argumentProblem({ code: 'TOOL_ERROR', message: server }, { a: { x: 1 }, b: 2 }, SUM)).toEqual({
      pointer: '/a',
      message: 'expected number, got object',
      server,
    });
  });

  it('says nothing for errors that are not about arguments', () => {
    expect(argumentProblem({ code: 'TOOL_ERROR', message: 'failure 1 of 9 for boom' }, { a: 1, b: 2 }, SUM)).toBeNull();
    expect(argumentProblem({ code: 'SERVER_START_FAILED', message: '/usr/bin/node: not found' })).toBeNull();
    expect(argumentProblem(null)).toBeNull();
    // Arguments that fit the schema: the server's refusal is not pinned on one.
    expect(argumentProblem({ code: 'TOOL_ERROR', message: 'invalid params' }, { a: 1, b: 2 }, SUM)).toBeNull();
  });

  it('checkArgs names a missing required argument', () => {
    expect(checkArgs({ a: 1 }, SUM)).toEqual({ pointer: '/b', message: 'required, missing' });
    expect(checkArgs({ a: 1, b: 2.5 }, SUM)).toBeNull();
  });
});
