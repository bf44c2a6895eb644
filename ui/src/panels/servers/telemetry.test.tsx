// @vitest-environment jsdom
// Where runs' traces go (OpenTelemetry) in the Servers panel: the "Telemetry" form —
// checked field by field before anything is sent, header values only ever environment
// variables' names, the payload switch with its warning — and what the section says is
// in effect, against a fake backend (mockIPC).

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { statusStore, type TelemetrySettings } from '../../backend';
import { commandError, mockBackend, type MockBackend } from '../../backend/mock-backend';
import { settling, tid } from '../../testing/dom';
import { installLayoutStubs } from '../../testing/jsdom';
import { cancelAllAsks } from '../files';
import { ServersPanel } from './ServersPanel';
import { initialServersState, openServersPanel, openTelemetrySettings, serversStore } from './store';
import { checkTelemetryForm, telemetryFormOf, telemetrySource, telemetrySummary, type TelemetryForm } from './telemetry';

const empty: TelemetryForm = { endpoint: '', protocol: '', headers: '', capturePayloads: false };
const settings = (over: Partial<TelemetrySettings> = {}): TelemetrySettings => ({
  path: '/h/settings.json',
  config: null,
  problem: null,
  writable: true,
  missing_vars: [],
  sending_to: null,
  start_problem: null,
  flag_endpoint: null,
  env_endpoint: null,
  ...over,
});

describe('the telemetry form', () => {
  it('sends what was typed, trimmed, header values as variable names, empty fields as none', () => {
    expect(checkTelemetryForm({ ...empty, endpoint: ' http://localhost:4318 ' })).toEqual({
      config: { endpoint: 'http://localhost:4318', protocol: null, headers: [], capture_payloads: false },
    });
    const form = { endpoint: 'https://api.honeycomb.io', protocol: 'grpc' as const, headers: ' x-honeycomb-team = ${env:HONEYCOMB_KEY} \n\n x-tenant=$TENANT ', capturePayloads: true };
    expect(checkTelemetryForm(form)).toEqual({
      config: {
        endpoint: 'https://api.honeycomb.io',
        protocol: 'grpc',
        headers: [
          { name: 'x-honeycomb-team', env: 'HONEYCOMB_KEY' },
          { name: 'x-tenant', env: 'TENANT' },
        ],
        capture_payloads: true,
      },
    });
    // An empty endpoint is allowed: the environment's is used.
    expect(checkTelemetryForm(empty)).toMatchObject({ config: { endpoint: null } });
  });

  it('names the field that does not pass, and never keeps a token', () => {
    expect(checkTelemetryForm({ ...empty, endpoint: 'localhost:4318' })).toMatchObject({ problems: { endpoint: expect.stringContaining('http(s)') } });
    expect(checkTelemetryForm({ ...empty, headers: 'x-honeycomb-team=hcaik_01ABCdef234GHIjkl567MNOpqr' })).toMatchObject({
      problems: { headers: expect.stringContaining('looks like a token itself') },
    });
    expect(checkTelemetryForm({ ...empty, headers: 'bad header=${env:X}' })).toMatchObject({ problems: { headers: expect.stringContaining('not a header name') } });
    expect(checkTelemetryForm({ ...empty, headers: 'x-team' })).toMatchObject({ problems: { headers: expect.stringContaining('x-team=${env:') } });
    expect(checkTelemetryForm({ ...empty, headers: 'a=${env:A}\nA=${env:B}' })).toMatchObject({ problems: { headers: expect.stringContaining('twice') } });
  });

  it('starts from what is written, and says in one line what is in effect', () => {
    const written = settings({
      config: { endpoint: 'http://localhost:4318', protocol: null, headers: [{ name: 'x-team', env: 'TEAM_KEY' }], capture_payloads: true },
      sending_to: 'http://localhost:4318/v1/traces',
    });
    expect(telemetryFormOf(written)).toEqual({ endpoint: 'http://localhost:4318', protocol: '', headers: 'x-team=${env:TEAM_KEY}', capturePayloads: true });
    expect(telemetryFormOf(null)).toEqual(empty);
    expect(telemetrySummary(written)).toBe('Traces go to http://localhost:4318/v1/traces · with arguments and results');
    expect(telemetrySummary(settings())).toContain('Off');
    expect(telemetrySource(settings({ flag_endpoint: 'http://flag:4318' }))).toContain('--otlp http://flag:4318');
    expect(telemetrySource(settings({ env_endpoint: 'http://env:4318', sending_to: 'http://env:4318/v1/traces' }))).toContain('OTEL_EXPORTER_OTLP_ENDPOINT=http://env:4318');
    expect(telemetrySource(written)).toBeNull();
  });
});

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
let be: MockBackend;
const { settle } = settling(6, 0);
const type = async (id: string, value: string) => {
  const input = tid(id) as HTMLInputElement | HTMLTextAreaElement;
  expect(input).not.toBeNull();
  const proto = input instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  const set = Object.getOwnPropertyDescriptor(proto, 'value')!.set!;
  await act(async () => {
    set.call(input, value);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
};

beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  be = mockBackend();
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

describe('the Servers panel’s Telemetry section', () => {
  it('saves a loopback collector after checking the fields, and then says where traces go', async () => {
    await open(openTelemetrySettings);
    expect(tid('telemetry-summary')!.dataset.on).toBe('false');
    expect(tid('telemetry-summary')!.textContent).toContain('nothing is sent anywhere');
    expect(tid('telemetry-form')).not.toBeNull();

    await type('telemetry-endpoint', 'localhost:4318');
    await type('telemetry-headers', 'x-team=sk-proj-abc123def456');
    await act(async () => tid('telemetry-save')!.click());
    await settle();
    const fields = [...document.querySelectorAll('[data-testid="telemetry-error"]')].map((e) => (e as HTMLElement).dataset.field);
    expect(fields).toEqual(['endpoint', 'headers']);
    expect(be.calls('set_telemetry_settings')).toEqual([]);

    expect(tid('telemetry-capture-warning')!.className).not.toContain('inline-warning');
    await act(async () => tid('telemetry-capture')!.click());
    expect(tid('telemetry-capture-warning')!.className).toContain('inline-warning');
    expect(tid('telemetry-capture-warning')!.textContent).toContain('Arguments and results are then sent');

    await type('telemetry-endpoint', 'http://127.0.0.1:4318');
    await type('telemetry-headers', 'x-team=${env:TEAM_KEY}');
    await act(async () => tid('telemetry-save')!.click());
    await settle();
    expect(be.calls('set_telemetry_settings')).toEqual([
      { config: { endpoint: 'http://127.0.0.1:4318', protocol: null, headers: [{ name: 'x-team', env: 'TEAM_KEY' }], capture_payloads: true } },
    ]);
    expect(tid('telemetry-form')).toBeNull();
    expect(tid('telemetry-summary')!.textContent).toBe('Traces go to http://127.0.0.1:4318/v1/traces · with arguments and results');
    expect(tid('telemetry-settings')!.querySelector('.badge-ok')!.textContent).toBe('on');
  });

  it('says why telemetry is off, which variables are missing, and what wins over the section', async () => {
    be.on('telemetry_settings', () =>
      settings({
        config: { endpoint: 'https://api.honeycomb.io', protocol: null, headers: [{ name: 'x-honeycomb-team', env: 'HONEYCOMB_KEY' }], capture_payloads: false },
        missing_vars: ['HONEYCOMB_KEY'],
        start_problem: 'telemetry is off: the telemetry header `x-honeycomb-team` reads the environment variable `HONEYCOMB_KEY`, which is not set',
      }),
    );
    await open();
    expect(tid('telemetry-start-problem')!.textContent).toContain('HONEYCOMB_KEY');
    expect(tid('telemetry-vars-unset')!.textContent).toContain('$HONEYCOMB_KEY is not set');
    expect(tid('telemetry-settings')!.querySelector('.badge-warn')!.textContent).toBe('cannot be used');
    await act(async () => root.unmount());
    root = createRoot(host);
    be.on('telemetry_settings', () => settings({ flag_endpoint: 'http://127.0.0.1:9999', sending_to: 'http://127.0.0.1:9999/v1/traces' }));
    await open();
    expect(tid('telemetry-source')!.textContent).toContain('--otlp http://127.0.0.1:9999');
  });

  it('shows the backend’s refusal under the form and keeps the form open', async () => {
    be.on('set_telemetry_settings', () => {
      throw commandError('BAD_REQUEST', 'the OTLP endpoint `http://` (from the `telemetry` section of settings.json) is not an http:// or https:// URL with a host');
    });
    await open(openTelemetrySettings);
    await type('telemetry-endpoint', 'http://127.0.0.1:4318');
    await act(async () => tid('telemetry-save')!.click());
    await settle();
    expect(tid('telemetry-form')).not.toBeNull();
    expect(tid('telemetry-error')!.textContent).toContain('is not an http:// or https:// URL');
  });
});
