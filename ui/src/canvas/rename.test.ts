// Inline rename (rename.ts): the name is written trimmed; an empty name removes the
// key (the card shows the id again); an unchanged name records nothing.

import { beforeEach, describe, expect, it } from 'vitest';
import { findStep } from '../doc/query';
import { docStore } from '../doc/store';
import type { Blueprint } from '../doc/types';
import { commitName } from './rename';

const s = () => docStore.getState();
beforeEach(() => s().load({ blueprint: 1, id: 'r', steps: [{ id: 'a', kind: 'wait', ms: 1 }] } as unknown as Blueprint));

describe('commitName', () => {
  it('writes the trimmed name, and removes it when empty', () => {
    expect(commitName('a', '  Fetch the page ')).toBe(true);
    expect(findStep(s().doc, 'a')?.name).toBe('Fetch the page');
    expect(commitName('a', '   ')).toBe(true);
    expect('name' in findStep(s().doc, 'a')!).toBe(false);
    expect(s().past).toHaveLength(2);
  });

  it('records nothing when the name is unchanged, and refuses unknown steps', () => {
    commitName('a', '');
    expect(s().past).toHaveLength(0);
    expect(commitName('nope', 'x')).toBe(false);
  });
});
