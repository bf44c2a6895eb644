// The run view follows the blueprint on the canvas: loading another blueprint leaves the
// run of the one before; loading the same blueprint again keeps it.

import { afterEach, describe, expect, it } from 'vitest';
import { docStore } from '../../doc/store';
import { fixture } from '../../run/fixtures/load';
import { runStore } from '../../run';
import './session';

const doc = (id: string) => ({ blueprint: 1, id, steps: [] }) as never;

describe('the run view and the document', () => {
  afterEach(() => runStore.getState().reset());

  it('leaves a past run when another blueprint is loaded, keeps it for the same one', () => {
    const f = fixture('loop-collect');
    docStore.getState().load(doc('first'));
    runStore.getState().begin('r1', f.stepIds, 'history', { parents: f.parents });
    runStore.getState().receive(f.events);
    expect(runStore.getState().runId).toBe('r1');

    docStore.getState().load(doc('first'));
    expect(runStore.getState().runId).toBe('r1');

    docStore.getState().load(doc('second'));
    expect(runStore.getState().runId).toBeNull();
    expect(runStore.getState().mode).toBe('idle');
  });
});
