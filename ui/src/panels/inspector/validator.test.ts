import { describe, expect, it } from 'vitest';
import type { FormValidation, RJSFSchema } from '@rjsf/utils';
import { EvalFreeValidator } from './validator';

const schema: RJSFSchema = {
  type: 'object',
  required: ['message'],
  properties: {
    message: { type: 'string' },
    count: { type: 'integer', minimum: 1 },
    mode: { type: 'string', enum: ['fast', 'slow'] },
    nested: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, tags: { type: 'array', items: { type: 'number' } } } },
  },
};

describe('EvalFreeValidator', () => {
  const v = new EvalFreeValidator();

  it('accepts valid data', () => {
    expect(v.validateFormData({ message: 'hi', count: 2 }, schema).errors).toEqual([]);
    expect(v.isValid(schema, { message: 'hi' }, schema)).toBe(true);
  });

  it('reports a missing required property on that property', () => {
    const r = v.validateFormData({}, schema);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ name: 'required', property: '.message', params: { missingProperty: 'message' } });
    expect(r.errorSchema).toEqual({ message: { __errors: ["must have required property 'message'"] } });
    expect(v.isValid(schema, {}, schema)).toBe(false);
  });

  it('reports a wrong type where it is, nested ones too', () => {
    const r = v.validateFormData({ message: 'x', count: 'many', nested: { id: 'a', tags: [1, 'two'] } }, schema);
    expect(r.errors.map((e) => [e.name, e.property])).toEqual([
      ['type', '.count'],
      ['type', '.nested.tags[1]'],
    ]);
    expect(r.errors[0]!.message).toBe('must be integer');
    expect(r.errorSchema).toMatchObject({ count: { __errors: ['must be integer'] }, nested: { tags: { 1: { __errors: ['must be number'] } } } });
    expect(v.validateFormData({ message: 'x', nested: {} }, schema).errors[0]).toMatchObject({ name: 'required', property: '.nested.id' });
    expect(v.validateFormData({ message: 'x', count: 0 }, schema).errors[0]).toMatchObject({ name: 'minimum', property: '.count' });
  });

  it('lets templates stand in for any type, but still wants required values', () => {
    expect(v.validateFormData({ message: '{{ inputs.m }}', count: '{{ prev.n }}', mode: '{{ inputs.mode }}', nested: '{{ x }}' }, schema).errors).toEqual([]);
    expect(v.validateFormData({ count: '{{ prev.n }}' }, schema).errors.map((e) => e.name)).toEqual(['required']);
    const strict = new EvalFreeValidator({ templates: false });
    expect(strict.validateFormData({ message: 'x', count: '{{ n }}' }, schema).errors.map((e) => e.property)).toEqual(['.count']);
  });

  it('resolves $refs against the root, adds custom errors, and never throws on a bad schema', () => {
    const root: RJSFSchema = { definitions: { n: { type: 'number' } }, type: 'object', properties: { a: { $ref: '#/definitions/n' } } };
    expect(v.isValid({ $ref: '#/definitions/n' }, 'x', root)).toBe(false);
    expect(v.isValid({ $ref: '#/definitions/n' }, 3, root)).toBe(true);
    const r = v.validateFormData({ message: 'x' }, schema, (_data, errors) => {
      (errors as FormValidation<{ message: string }>).message?.addError('too short');
      return errors;
    });
    expect(r.errorSchema).toMatchObject({ message: { __errors: ['too short'] } });
    const bad = v.validateFormData({ a: 1 }, { type: 'object', properties: { a: { $ref: '#/nowhere' } } });
    expect(bad.errors.some((e) => e.stack.includes('invalid schema'))).toBe(true);
  });

  it('does not annotate the schema objects it is given', () => {
    const s: RJSFSchema = { type: 'object', properties: { a: { type: 'string' } } };
    const before = JSON.stringify(s);
    v.validateFormData({ a: 1 }, s);
    expect(Object.getOwnPropertyNames(s)).toEqual(['type', 'properties']);
    expect(JSON.stringify(s)).toBe(before);
  });
});
