import { describe, expect, it } from 'vitest';
import { fieldsOfSchema, fieldsOfValue } from './output-fields';

describe('output fields', () => {
  it('come from an output schema’s properties, two levels deep', () => {
    const schema = { type: 'object', properties: { result: { type: 'number' }, meta: { type: 'object', properties: { took: {}, deep: { properties: { x: {} } } } } } };
    expect(fieldsOfSchema(schema)).toEqual(['result', 'meta', 'meta.took', 'meta.deep']);
  });
  it('come from a value’s keys, a list through its first item', () => {
    expect(fieldsOfValue({ said: 'hi', entities: [{ name: 'ada', type: 'person' }], 'odd key': 1 })).toEqual([
      'said',
      'entities',
      'entities[0].name',
      'entities[0].type',
    ]);
    expect(fieldsOfValue(['a'])).toEqual([]);
    expect(fieldsOfValue('text')).toEqual([]);
  });
});
