// The Servers panel's notice: configured servers the open blueprint also declares.

import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../doc/types';
import { shadowedServers } from './shadowed';

const d = (code: string, pointer: string, message: string): Diagnostic => ({ level: 'warning', code, pointer, message });

describe('shadowed servers', () => {
  it('names each server once, from the steps that call it or the servers entry', () => {
    const list = [
      d('SERVER_SHADOWED', '/steps/0/server', 'step `a` calls server `memory`: this blueprint declares its own `memory` (…)'),
      d('SERVER_SHADOWED', '/steps/2/steps/0/server', 'step `b` calls server `memory`: …'),
      d('TOOL_UNKNOWN', '/steps/1/tool', 'server `echo` has no tool `x`'),
      d('SERVER_SHADOWED', '/servers/a~1b', 'this blueprint declares its own `a/b` (…)'),
    ];
    expect(shadowedServers(list)).toEqual(['memory', 'a/b']);
  });
  it('is empty without the warning', () => {
    expect(shadowedServers([d('SERVER_UNKNOWN', '/steps/0/server', 'server `x` is not configured')])).toEqual([]);
  });
});
