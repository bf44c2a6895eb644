// The first-save question's rules: an id made from a name, and what is refused (no
// name, no id, not an id, an id a stored blueprint has).

import { describe, expect, it } from 'vitest';
import { checkNameAndId, idFromName } from './SaveAsDialog';

describe('idFromName', () => {
  it('makes a blueprint id from a name', () => {
    expect(idFromName('Pipeline (prev)')).toBe('pipeline-prev');
    expect(idFromName('Café Über 2')).toBe('cafe-uber-2');
    expect(idFromName('  --Sync_now!! ')).toBe('sync_now');
    expect(idFromName('日本')).toBe('');
    expect(idFromName('x'.repeat(100))).toHaveLength(64);
  });
});

describe('checkNameAndId', () => {
  const taken = new Map([['demo', 'The demo']]);
  it('accepts a name and a free, well-formed id', () => {
    expect(checkNameAndId({ name: 'My flow', id: 'my-flow_2' }, taken)).toBeNull();
  });
  it('refuses what would not save or would clash', () => {
    expect(checkNameAndId({ name: ' ', id: 'a' }, taken)?.field).toBe('name');
    expect(checkNameAndId({ name: 'A', id: '' }, taken)?.field).toBe('id');
    expect(checkNameAndId({ name: 'A', id: 'My Flow' }, taken)?.message).toContain('is not a blueprint id');
    expect(checkNameAndId({ name: 'A', id: '-a' }, taken)?.field).toBe('id');
    expect(checkNameAndId({ name: 'A', id: 'demo' }, taken)?.message).toContain('taken by the stored blueprint “The demo”');
  });
});
