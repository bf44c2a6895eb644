// @vitest-environment jsdom
// The model servers may ask (MCP sampling) in the Servers panel: each server's switch
// "May ask the model" saved as soon as it is flipped (`set_server_sampling`), and the
// "Model for sampling" form — checked field by field before anything is sent, the key
// only ever an environment variable's name — against a fake backend (mockIPC).

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { statusStore, type SamplingSettings } from '../../backend';
import { commandError, mockBackend, type MockBackend } from '../../backend/mock-backend';
import { settling, tid } from '../../testing/dom';
import { installLayoutStubs } from '../../testing/jsdom';
import { cancelAllAsks } from '../files';
import { checkProviderForm, formOf, looksLikeAKey, providerSummary, variableName, type ProviderForm } from './sampling';
import { ServersPanel } from './ServersPanel';
import { initialServersState, openSamplingSettings, openServersPanel, serversStore } from './store';

const empty: ProviderForm = { baseUrl: '', model: '', keyVar: '', timeoutMs: '', maxTokens: '' };
const filled = (over: Partial<ProviderForm> = {}): ProviderForm => ({ ...empty, baseUrl: 'http://localhost:11434/v1', model: 'llama3.2', ...over });

describe('the form of the model for sampling', () => {
  it('sends what was typed, trimmed, the key as a variable name, empty numbers as none', () => {
    expect(checkProviderForm(filled({ baseUrl: ' http://localhost:11434/v1 ', model: ' llama3.2 ', keyVar: ' OPENAI_API_KEY ', timeoutMs: '30_000' }))).toEqual({
      provider: { base_url: 'http://localhost:11434/v1', model: 'llama3.2', api_key_env: 'OPENAI_API_KEY', timeout_ms: 30000, max_tokens: null },
    });
    expect(checkProviderForm(filled({ maxTokens: '512' }))).toMatchObject({ provider: { api_key_env: null, timeout_ms: null, max_tokens: 512 } });
  });

  it('takes a variable pasted as $NAME or ${env:NAME}', () => {
    expect(variableName('$OPENAI_API_KEY')).toBe('OPENAI_API_KEY');
    expect(variableName('${env:OPENAI_API_KEY}')).toBe('OPENAI_API_KEY');
    expect(variableName('  ')).toBeNull();
    expect(checkProviderForm(filled({ keyVar: '${env:GROQ_KEY}' }))).toMatchObject({ provider: { api_key_env: 'GROQ_KEY' } });
  });

  it('names every field that does not pass', () => {
    const r = checkProviderForm({ baseUrl: 'localhost:11434', model: ' ', keyVar: '1KEY', timeoutMs: '0', maxTokens: '-3' });
    expect('problems' in r && Object.keys(r.problems).sort()).toEqual(['baseUrl', 'keyVar', 'maxTokens', 'model', 'timeoutMs']);
    expect(checkProviderForm(filled({ baseUrl: 'ftp://x/v1' }))).toMatchObject({ problems: { baseUrl: expect.stringContaining('http(s)') } });
    expect(checkProviderForm(filled({ baseUrl: '' }))).toMatchObject({ problems: { baseUrl: expect.stringContaining('/chat/completions') } });
  });

  it('refuses what looks like a key itself, and says to name its variable', () => {
    for (const key of ['sk-proj-abc123def456', 'sk_live_51HxYz', 'ghp_0123456789abcdefABCDEF0123456789abcd', 'AIzaSyD3x4mpl3K3yW1thM1x3dCas3']) {
      expect(looksLikeAKey(key)).toBe(true);
      expect(checkProviderForm(filled({ keyVar: key }))).toMatchObject({ problems: { keyVar: expect.stringContaining('looks like a key itself') } });
    }
    for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'MY_VERY_LONG_ENVIRONMENT_VARIABLE_NAME', 'SK_KEY', 'token2']) expect(looksLikeAKey(name)).toBe(false);
  });

  it('starts from what is configured, and says it in one line', () => {
    const settings: SamplingSettings = {
      path: '/h/settings.json',
      provider: { base_url: 'https://api.openai.com/v1', model: 'gpt-4o-mini', api_key_env: 'OPENAI_API_KEY', timeout_ms: 60000, max_tokens: null },
      problem: null,
      key_set: false,
      writable: true,
    };
    expect(formOf(settings)).toEqual({ baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', keyVar: 'OPENAI_API_KEY', timeoutMs: '60000', maxTokens: '' });
    expect(formOf(null)).toEqual(empty);
    expect(providerSummary(settings)).toBe('gpt-4o-mini at https://api.openai.com/v1 · key from $OPENAI_API_KEY (not set)');
    expect(providerSummary({ ...settings, key_set: true })).toBe('gpt-4o-mini at https://api.openai.com/v1 · key from $OPENAI_API_KEY');
    expect(providerSummary({ ...settings, provider: null })).toContain('shown to you as a question');
  });
});

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
let be: MockBackend;
/** Lets promises and effects run: 6 turns, no timer waited for. */
const { settle } = settling(6, 0);
const type = async (id: string, value: string) => {
  const input = tid(id) as HTMLInputElement;
  expect(input).not.toBeNull();
  const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
  await act(async () => {
    set.call(input, value);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
};
const server = (sampling: boolean) => ({
  name: 'everything',
  transport: 'stdio',
  command: 'node server-everything stdio',
  url: null,
  approved: true,
  config: { command: 'node', args: ['server-everything', 'stdio'], ...(sampling ? { sampling: true } : {}) },
  sampling,
});

beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  be = mockBackend({ list_servers: () => [server(false)], set_server_sampling: (a) => [server(a.on as boolean)] });
});

afterEach(async () => {
  cancelAllAsks();
  await act(async () => root.unmount());
  host.remove();
  be.stop();
  serversStore.setState(initialServersState());
  statusStore.setState({ message: null, interrupted: [] });
});

async function open(how: () => void = openServersPanel) {
  await act(async () => root.render(<ServersPanel />));
  await act(async () => how());
  await settle();
}

describe('the Servers panel', () => {
  it('flips a server’s switch "May ask the model" and saves it at once; a refusal is shown on its row', async () => {
    await open();
    const toggle = tid('server-sampling-everything') as HTMLInputElement;
    expect(toggle.getAttribute('role')).toBe('switch');
    expect(toggle.checked).toBe(false);
    expect(tid('server-row-everything')!.textContent).toContain('lets this server ask your configured model (or you) for completions during runs');
    await act(async () => toggle.click());
    await settle();
    expect(be.calls('set_server_sampling')).toEqual([{ name: 'everything', on: true }]);
    expect((tid('server-sampling-everything') as HTMLInputElement).checked).toBe(true);

    be.on('set_server_sampling', () => {
      throw commandError('BAD_REQUEST', 'server `everything` is not kept in this data folder');
    });
    await act(async () => tid('server-sampling-everything')!.click());
    await settle();
    expect(tid('server-sampling-error-everything')!.textContent).toContain('not kept in this data folder');
    expect((tid('server-sampling-everything') as HTMLInputElement).checked).toBe(true);
  });

  it('saves the model for sampling with the key as ${env:NAME}’s name, after checking the fields', async () => {
    await open(openSamplingSettings);
    expect(tid('sampling-summary')!.dataset.configured).toBe('false');
    expect(tid('sampling-form')).not.toBeNull();
    expect(tid('sampling-key-note')!.textContent).toContain('never the key itself');

    await type('sampling-key-var', 'sk-proj-abc123def456');
    await act(async () => tid('sampling-save')!.click());
    await settle();
    const fields = [...document.querySelectorAll('[data-testid="sampling-error"]')].map((e) => (e as HTMLElement).dataset.field);
    expect(fields).toEqual(['baseUrl', 'model', 'keyVar']);
    expect(be.calls('set_sampling_provider')).toEqual([]);

    await type('sampling-base-url', 'http://127.0.0.1:5555/v1');
    await type('sampling-model', 'loopback-model');
    await type('sampling-key-var', 'LOOPBACK_KEY');
    await type('sampling-timeout-ms', '5000');
    await act(async () => tid('sampling-save')!.click());
    await settle();
    expect(be.calls('set_sampling_provider')).toEqual([
      { provider: { base_url: 'http://127.0.0.1:5555/v1', model: 'loopback-model', api_key_env: 'LOOPBACK_KEY', timeout_ms: 5000, max_tokens: null } },
    ]);
    expect(tid('sampling-form')).toBeNull();
    expect(tid('sampling-summary')!.textContent).toBe('loopback-model at http://127.0.0.1:5555/v1 · key from $LOOPBACK_KEY (not set)');
    expect(tid('sampling-key-unset')!.textContent).toContain('$LOOPBACK_KEY is not set');
  });

  it('says what is wrong with the settings file, and what to do about it', async () => {
    const problem = '/h/settings.json: not valid JSON: EOF while parsing an object at line 1 column 10';
    be.on('sampling_settings', () => ({ path: '/h/settings.json', provider: null, problem, key_set: false, writable: false }));
    await open();
    expect(tid('sampling-problem')!.textContent).toContain(problem);
    expect(tid('sampling-problem')!.textContent).toContain('Fix or remove the file');
    await act(async () => root.unmount());
    root = createRoot(host);
    const section = 'sampling: `api_key` must be written as "${env:NAME}"';
    const provider = { base_url: 'http://x/v1', model: 'm', api_key_env: null, timeout_ms: null, max_tokens: null };
    be.on('sampling_settings', () => ({ path: '/h/settings.json', provider, problem: section, key_set: false, writable: true }));
    await open();
    expect(tid('sampling-problem')!.textContent).toContain('Save the model here');
    expect(tid('sampling-settings')!.querySelector('.badge-warn')!.textContent).toBe('cannot be used');
  });

  it('shows the backend’s refusal under the form and keeps the form open', async () => {
    be.on('set_sampling_provider', () => {
      throw commandError('BAD_REQUEST', '`api_key` must be written exactly "${env:NAME}"');
    });
    await open(openSamplingSettings);
    await type('sampling-base-url', 'http://127.0.0.1:5555/v1');
    await type('sampling-model', 'm');
    await act(async () => tid('sampling-save')!.click());
    await settle();
    expect(tid('sampling-form')).not.toBeNull();
    expect(tid('sampling-error')!.textContent).toContain('`api_key` must be written exactly');
  });
});
