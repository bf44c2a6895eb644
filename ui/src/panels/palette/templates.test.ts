// Palette templates: required arguments pre-filled from the input schema.

import { describe, expect, it } from 'vitest';
import { exampleValue, KIND_ITEMS, matches, promptTemplate, requiredArgs, resourceTemplate, toolTemplate } from './templates';

describe('tool templates', () => {
  it('pre-fills only the required arguments, in schema order, with defaults or empty values', () => {
    const schema = {
      type: 'object',
      properties: {
        message: { type: 'string' },
        optional: { type: 'string' },
        count: { type: 'integer' },
        ratio: { type: 'number', minimum: 0.5 },
        flag: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        level: { type: 'integer', default: 3 },
        kind: { const: 'fixed' },
        maybe: { type: ['null', 'string'] },
        nothing: { type: 'null' },
        opts: {
          type: 'object',
          properties: { depth: { type: 'integer' }, label: { type: 'string' } },
          required: ['depth'],
        },
      },
      required: ['opts', 'nothing', 'maybe', 'kind', 'level', 'mode', 'tags', 'flag', 'ratio', 'count', 'message', 'extra'],
    };
    const t = toolTemplate({ server: 'cluster', name: 'list_resources', input_schema: schema });
    expect(t).toEqual({
      kind: 'tool',
      server: 'cluster',
      tool: 'list_resources',
      args: {
        message: '',
        count: 0,
        ratio: 0.5,
        flag: false,
        tags: [],
        mode: 'fast',
        level: 3,
        kind: 'fixed',
        maybe: '',
        nothing: null,
        opts: { depth: 0 },
        extra: '',
      },
    });
    expect(Object.keys(t.args as object)).toEqual([
      'message',
      'count',
      'ratio',
      'flag',
      'tags',
      'mode',
      'level',
      'kind',
      'maybe',
      'nothing',
      'opts',
      'extra',
    ]);
  });

  it('has empty args without required arguments or schema', () => {
    expect(toolTemplate({ server: 's', name: 'ping', input_schema: { type: 'object', properties: { a: { type: 'string' } } } }).args).toEqual({});
    expect(toolTemplate({ server: 's', name: 'ping', input_schema: null }).args).toEqual({});
  });

  it('follows local $refs, allOf and anyOf', () => {
    const schema = {
      type: 'object',
      $defs: { Point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] } },
      allOf: [{ properties: { at: { $ref: '#/$defs/Point' } }, required: ['at'] }, { required: ['either'] }],
      properties: { either: { anyOf: [{ type: 'null' }, { type: 'boolean' }] } },
    };
    expect(requiredArgs(schema)).toEqual({ either: false, at: { x: 0, y: 0 } });
  });

  it('survives recursive schemas', () => {
    const schema = {
      type: 'object',
      $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } }, required: ['next'] } },
      properties: { root: { $ref: '#/$defs/Node' } },
      required: ['root'],
    };
    const args = requiredArgs(schema);
    expect(JSON.stringify(args).length).toBeLessThan(200);
    expect(args).toHaveProperty('root.next.next');
  });

  it('copies defaults (templates never share objects with the schema)', () => {
    const schema = { type: 'object', properties: { o: { type: 'object', default: { a: [1] } } }, required: ['o'] };
    const args = requiredArgs(schema);
    expect(args).toEqual({ o: { a: [1] } });
    expect(args.o).not.toBe(schema.properties.o.default);
    expect(exampleValue({ type: 'string' })).toBe('');
  });
});

describe('resource and prompt templates', () => {
  it('builds a resource read', () => {
    expect(resourceTemplate({ server: 'docs', uri: 'file:///readme.md' })).toEqual({ kind: 'resource', server: 'docs', uri: 'file:///readme.md' });
  });
  it('pre-fills required prompt arguments', () => {
    const p = promptTemplate({
      server: 'everything',
      name: 'complex_prompt',
      arguments: [
        { name: 'temperature', description: null, required: true },
        { name: 'style', description: null, required: false },
      ],
    });
    expect(p).toEqual({ kind: 'prompt', server: 'everything', prompt: 'complex_prompt', args: { temperature: '' } });
  });
});

describe('kinds and search', () => {
  it('gives every kind the fields its kind requires', () => {
    const required: Record<string, string[]> = {
      tool: ['tool'],
      resource: ['server', 'uri'],
      prompt: ['server', 'prompt'],
      transform: ['value'],
      switch: ['cases'],
      loop: ['steps'],
      workflow: ['workflow'],
      wait: ['ms'],
      input: ['prompt'],
    };
    expect([...new Set(KIND_ITEMS.map((k) => k.kind))].sort()).toEqual(Object.keys(required).sort());
    expect(new Set(KIND_ITEMS.map((k) => k.key ?? k.kind)).size, 'palette keys are unique').toBe(KIND_ITEMS.length);
    for (const k of KIND_ITEMS) {
      expect(k.template.kind).toBe(k.kind);
      for (const f of required[k.kind]!) expect(k.template, `${k.kind}.${f}`).toHaveProperty(f);
    }
  });
  it('matches every word, case-insensitively, across the texts', () => {
    expect(matches('', 'x')).toBe(true);
    expect(matches('ECHO back', 'echo', 'Echoes back the input')).toBe(true);
    expect(matches('echo sum', 'echo', 'Echoes back')).toBe(false);
    expect(matches('everything', 'everything', 'add', null)).toBe(true);
  });
});
