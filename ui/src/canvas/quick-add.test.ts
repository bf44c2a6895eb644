// The quick-add's items (quick-add.ts): step kinds and every tool/resource/prompt of
// the servers, filtered; a picked template is added unconnected.

import { describe, expect, it } from 'vitest';
import type { ServerOffer } from '../backend';
import { filterQuick, quickItems, unconnected } from './quick-add';

const offers = [
  {
    server: 'echo',
    tools: [{ server: 'echo', name: 'add', description: 'Adds two numbers', input_schema: { type: 'object', required: ['a'], properties: { a: { type: 'number' } } } }],
    resources: [{ server: 'echo', uri: 'mem://x', name: 'x', description: null, mime_type: null }],
    prompts: [{ server: 'echo', name: 'greet', description: 'Greets', arguments: [] }],
    error: null,
  },
] as unknown as ServerOffer[];

describe('quick-add', () => {
  it('offers the kinds and every tool, resource and prompt', () => {
    const keys = quickItems(offers).map((i) => i.key);
    expect(keys).toContain('kind-transform');
    expect(keys).toContain('tool-echo-add');
    expect(keys).toContain('resource-echo-mem://x');
    expect(keys).toContain('prompt-echo-greet');
  });

  it('filters by every word typed', () => {
    const found = filterQuick(quickItems(offers), 'echo add');
    expect(found.map((i) => i.key)).toEqual(['tool-echo-add']);
    expect(found[0]!.template).toEqual({ kind: 'tool', server: 'echo', tool: 'add', args: { a: 0 } });
  });

  it('adds a template unconnected unless it names its after', () => {
    expect(unconnected({ kind: 'wait', ms: 5 })).toEqual({ kind: 'wait', ms: 5, after: [] });
    expect(unconnected({ kind: 'wait', after: ['x'] })).toEqual({ kind: 'wait', after: ['x'] });
  });
});
