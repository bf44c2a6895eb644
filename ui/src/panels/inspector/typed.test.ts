import { describe, expect, it } from 'vitest';
import { coerceBySchema, literalOf, literalTemplate, parseTyped, typedProblem } from './typed';

describe('parseTyped', () => {
  it('reads a JSON list typed where a list is wanted', () => {
    expect(parseTyped('["ada","grace","linus"]', ['array'])).toEqual(['ada', 'grace', 'linus']);
  });
  it('leaves templates, other types and non-JSON as text', () => {
    expect(parseTyped('{{ inputs.names }}', ['array'])).toBeNull();
    expect(parseTyped('"ada"', ['array'])).toBeNull();
    expect(parseTyped('ada, grace', ['array'])).toBeNull();
    expect(parseTyped('1.5', ['integer'])).toBeNull();
    expect(parseTyped('3', ['integer'])).toBe(3);
    expect(parseTyped('true', ['boolean'])).toBe(true);
  });
});

describe('typedProblem', () => {
  it('says what was typed and what the field wants', () => {
    expect(typedProblem('["a"]', ['array'])).toBeNull();
    expect(typedProblem('{"a": 1}', ['array'])).toBe('a JSON object; this field wants a list');
    expect(typedProblem('[1,', ['array'])).toMatch(/^not JSON \(line 1:/);
    expect(typedProblem('{{ x }}', ['array'])).toMatch(/Expression/);
  });
});

describe('coerceBySchema', () => {
  const schema = {
    type: 'object',
    properties: {
      names: { type: 'array', items: { type: 'string' } },
      n: { type: 'integer' },
      on: { type: 'boolean' },
      text: { type: 'string' },
      nested: { type: 'object', properties: { tags: { type: 'array' } } },
    },
  };
  it('turns typed JSON into the values the schema wants, leaving strings and templates', () => {
    const value = { names: '["ada","grace"]', n: '{{ a.n }}', on: 'true', text: '[1]', nested: { tags: '[1,2]' } };
    expect(coerceBySchema(schema, value)).toEqual({ names: ['ada', 'grace'], n: '{{ a.n }}', on: true, text: '[1]', nested: { tags: [1, 2] } });
  });
  it('returns the same object when nothing changes', () => {
    const value = { names: ['a'], text: 'x' };
    expect(coerceBySchema(schema, value)).toBe(value);
  });
});

describe('literal templates', () => {
  it('round-trips a fixed value through Expression and back', () => {
    const t = literalTemplate(['ada', 'grace']);
    expect(t).toBe('{{ `["ada","grace"]` }}');
    expect(literalOf(t)).toEqual(['ada', 'grace']);
    expect(literalOf('{{ inputs.names }}')).toBeUndefined();
  });
});
