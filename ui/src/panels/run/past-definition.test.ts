import { beforeEach, describe, expect, it } from 'vitest';
import { docStore } from '../../doc/store';
import type { Blueprint } from '../../doc/types';
import { restoreThisVersion, sameDefinition, showCurrent, showPastDefinition, usePastDefinition } from './past-definition';

const v1: Blueprint = { blueprint: 1, id: 'p', name: 'P', steps: [{ id: 'old', kind: 'transform', value: 1 }] };
const v2: Blueprint = { blueprint: 1, id: 'p', name: 'P', steps: [{ id: 'new', kind: 'transform', value: 2 }] };
const s = () => docStore.getState();

beforeEach(() => {
  usePastDefinition.setState({ shown: null });
  s().load(v2, { id: 'p' });
  s().setSettings({ name: 'P, edited' }); // an unsaved edit with its undo entry
});

describe('a past run with the definition it ran', () => {
  it('compares definitions without their layout or key order', () => {
    expect(sameDefinition(v1, { ...v1, layout: { old: { x: 1, y: 2 } } })).toBe(true);
    expect(sameDefinition(v1, { steps: v1.steps, name: 'P', id: 'p', blueprint: 1 })).toBe(true);
    expect(sameDefinition(v1, v2)).toBe(false);
  });

  it('shows a different definition read-only and goes back to the current document with its edits and history', () => {
    const current = s().doc;
    expect(showPastDefinition('run-1', v1)).toBe(true);
    expect(s().doc).toEqual(v1);
    expect(s().readOnly).toBe(true);
    expect(s().setSettings({ name: 'x' }).ok).toBe(false);
    showCurrent();
    expect(s().doc).toBe(current);
    expect(s().readOnly).toBe(false);
    expect(s().dirty).toBe(true);
    expect(s().past.map((h) => h.label)).toEqual(['Edit settings']);
    expect(usePastDefinition.getState().shown).toBeNull();
  });

  it('shows nothing else when the run ran the current definition, or a document of another blueprint', () => {
    const current = s().doc;
    expect(showPastDefinition('run-1', { ...current, layout: { new: { x: 9, y: 9 } } })).toBe(false);
    expect(showPastDefinition('run-2', { ...v1, id: 'other' })).toBe(false);
    expect(showPastDefinition('run-3', null)).toBe(false);
    expect(s().doc).toBe(current);
    expect(s().readOnly).toBe(false);
  });

  it('restores the past definition as one undoable, unsaved edit', () => {
    const current = s().doc;
    showPastDefinition('run-1', v1);
    restoreThisVersion();
    expect(s().doc).toEqual(v1);
    expect(s().readOnly).toBe(false);
    expect(s().dirty).toBe(true);
    expect(s().undo()).toBe(true);
    expect(s().doc).toBe(current);
  });

  it('forgets the kept document when another one is opened, and never brings it back over it', () => {
    showPastDefinition('run-1', v1);
    const other: Blueprint = { ...v1, id: 'other' };
    s().load(other, { id: 'other' });
    expect(usePastDefinition.getState().shown).toBeNull();
    expect(s().readOnly).toBe(false);
    showCurrent();
    expect(s().doc).toBe(other);
  });
});
