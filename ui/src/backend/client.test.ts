// @vitest-environment jsdom
// The backend wrapper: error answers become BackendError (code, message, diagnostics);
// without Tauri every call says so instead of failing obscurely.

import { afterEach, describe, expect, it } from 'vitest';
import { backend, BackendError, inTauri, NO_BACKEND } from './client';
import { commandError, diag, mockBackend, removeBackend } from './mock-backend';

afterEach(() => removeBackend());

describe('backend', () => {
  it('passes arguments and returns the data', async () => {
    const be = mockBackend({ put_server: (a) => [{ name: a.name, transport: 'http', command: null, url: 'u', approved: true, config: a.config }] });
    expect(inTauri()).toBe(true);
    const list = await backend.putServer('web', { url: 'u' });
    expect(be.calls('put_server')).toEqual([{ name: 'web', config: { url: 'u' } }]);
    expect(list[0]!.name).toBe('web');
  });

  it('throws the command error as a BackendError, with diagnostics narrowed', async () => {
    mockBackend({
      save_blueprint: () => {
        throw commandError('BLUEPRINT_INVALID', 'fix 1 error', [diag('error', 'CYCLE', '/steps/0', 'a'), { ...diag('warning', 'W', ''), level: 'note' }]);
      },
    });
    const e = await backend.saveBlueprint({ blueprint: 1, id: 'x', steps: [] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BackendError);
    const b = e as BackendError;
    expect([b.code, b.message]).toEqual(['BLUEPRINT_INVALID', 'fix 1 error']);
    expect(b.diagnostics.map((d) => [d.level, d.code, d.step])).toEqual([
      ['error', 'CYCLE', 'a'],
      ['warning', 'W', null],
    ]);
  });

  it('turns a plain rejection (Tauri could not call the command) into IPC_ERROR', async () => {
    mockBackend({
      list_servers: () => {
        throw 'invalid args `name` for command `list_servers`';
      },
    });
    await expect(backend.listServers()).rejects.toMatchObject({ code: 'IPC_ERROR', message: expect.stringContaining('invalid args') });
  });

  it('says NO_BACKEND outside the desktop app', async () => {
    removeBackend();
    expect(inTauri()).toBe(false);
    await expect(backend.studioInfo()).rejects.toMatchObject({ code: NO_BACKEND });
  });
});
