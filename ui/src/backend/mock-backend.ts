//! A fake desktop backend for tests: answers the studio's commands through
//! `mockIPC` (so the real `commands` of bindings.ts and `backend` run), records every
//! call, lets a test replace any answer, and sends the backend's events to what listens
//! (`events.*.listen`). Test-only: nothing in the app imports it.
//!
//! ```ts
//! const be = mockBackend({ save_blueprint: () => { throw commandError('BLUEPRINT_INVALID', 'no', [d]) } });
//! …
//! expect(be.calls('save_blueprint')).toHaveLength(1);
//! await be.emit('service-status', { state: 'reconnecting', pid: null, message: 'the service stopped' });
//! ```

import { emit } from '@tauri-apps/api/event';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import type { CommandError_Serialize, DiagnosticDto_Serialize } from '../bindings';

export type Handler = (args: Record<string, unknown>) => unknown;

export interface MockBackend {
  /** The calls of one command (their arguments), or every call in order. */
  calls(cmd?: string): Record<string, unknown>[];
  /** Command names in call order. */
  log: string[];
  /** Replaces the answer of a command. */
  on(cmd: string, handler: Handler): void;
  /** Sends an event of the backend (its Tauri name: `service-status`, `store-changed`) to its listeners. */
  emit(event: string, payload: unknown): Promise<void>;
  stop(): void;
}

/** An error answer, as Rust's `CommandError` serializes. */
export function commandError(code: string, message: string, diagnostics: DiagnosticDto_Serialize[] = []): CommandError_Serialize {
  return { code, message, diagnostics };
}

export function diag(
  level: 'error' | 'warning',
  code: string,
  pointer: string,
  step: string | null = null,
  message = `${code} at ${pointer}`,
): DiagnosticDto_Serialize {
  return { level, code, message, pointer, step, hint: null, producer: null };
}

const DEFAULTS: Record<string, Handler> = {
  studio_info: () => ({ version: '0.1.0', home: '/tmp/mcpflow', first_start: false, open_first: null, interrupted: [] }),
  // A service that owns the data folder, as the studio finds it when it starts.
  service_status: () => ({ state: 'connected', pid: 4242, message: null, team: null }),
  list_blueprints: () => [],
  get_blueprint: (a) => {
    throw commandError('BLUEPRINT_NOT_FOUND', `no blueprint ${String(a.id)}`);
  },
  validate_blueprint: () => [],
  save_blueprint: (a) => ({
    info: { id: (a.doc as { id: string }).id, rev: 1, saved_at: '2026-01-01T00:00:00Z', name: null, description: null },
    warnings: [],
  }),
  delete_blueprint: () => null,
  list_servers: () => [],
  put_server: () => [],
  delete_server: () => [],
  set_server_sampling: () => [],
  sampling_settings: () => ({ path: '/tmp/mcpflow/settings.json', provider: null, problem: null, key_set: false, writable: true }),
  set_sampling_provider: (a) => ({
    path: '/tmp/mcpflow/settings.json',
    provider: a.provider ? { api_key_env: null, timeout_ms: null, max_tokens: null, ...(a.provider as object) } : null,
    problem: null,
    key_set: false,
    writable: true,
  }),
  telemetry_settings: () => ({
    path: '/tmp/mcpflow/settings.json',
    config: null,
    problem: null,
    writable: true,
    missing_vars: [],
    sending_to: null,
    start_problem: null,
    flag_endpoint: null,
    env_endpoint: null,
  }),
  set_telemetry_settings: (a) => {
    const config = a.config as { endpoint?: string | null } | null;
    return {
      path: '/tmp/mcpflow/settings.json',
      config: config ? { endpoint: null, protocol: null, headers: [], capture_payloads: false, ...config } : null,
      problem: null,
      writable: true,
      missing_vars: [],
      sending_to: config?.endpoint ? `${config.endpoint.replace(/\/+$/, '')}/v1/traces` : null,
      start_problem: null,
      flag_endpoint: null,
      env_endpoint: null,
    };
  },
  approve_server: (a) => String(a.name),
  test_server: () => ({ protocol_version: null, tools: [] }),
  auth_status: () => [],
  auth_login: (a) => ({
    server: String(a.server),
    url: 'http://127.0.0.1:9/mcp',
    signed_in: true,
    grant: 'authorization_code',
    account: null,
    scopes: [],
    expires_at_ms: null,
    refreshable: true,
  }),
  auth_cancel: () => false,
  auth_logout: () => ({ revocation: 'revoked', reason: null }),
  server_offers: () => [],
  import_servers: () => null,
  import_blueprint: () => null,
  export_blueprint: () => null,
  run_servers: () => [],
  approve_run_server: (a) => String(a.name),
  start_run: () => ({ run_id: 'run-1', blueprint: 'bp' }),
  control_run: () => null,
  questions: () => [],
  answer_question: () => null,
  waiting_runs: () => [],
  answer_and_follow: (a) => ({ run_id: String(a.runId), blueprint: 'bp' }),
  open_question_url: () => null,
  set_breakpoints: () => null,
  // Nothing is in flight unless a test says so.
  follow_run: (a) => {
    throw commandError('RUN_NOT_ACTIVE', `run ${String(a.runId)} is not running`);
  },
  list_runs: () => [],
  move_runs: () => 0,
  get_run: (a) => {
    throw commandError('RUN_NOT_FOUND', `no run ${String(a.runId)}`);
  },
};

export function mockBackend(handlers: Record<string, Handler> = {}): MockBackend {
  const table: Record<string, Handler> = { ...DEFAULTS, ...handlers };
  const recorded: { cmd: string; args: Record<string, unknown> }[] = [];
  mockIPC(
    (cmd, payload) => {
      const args = (payload ?? {}) as Record<string, unknown>;
      recorded.push({ cmd, args });
      const h = table[cmd];
      if (!h) throw commandError('UNKNOWN_COMMAND', `the mock has no ${cmd}`);
      return h(args);
    },
    // `listen` and `emit` of @tauri-apps/api/event work among the window's listeners.
    { shouldMockEvents: true },
  );
  return {
    calls: (cmd) => recorded.filter((c) => cmd === undefined || c.cmd === cmd).map((c) => c.args),
    get log() {
      return recorded.map((c) => c.cmd);
    },
    on(cmd, handler) {
      table[cmd] = handler;
    },
    emit: (event, payload) => emit(event, payload),
    stop() {
      clearMocks();
    },
  };
}

/** No backend at all: what a plain browser has. */
export function removeBackend(): void {
  clearMocks();
  delete (window as { __TAURI_INTERNALS__?: unknown }).__TAURI_INTERNALS__;
}

/** A promise with its resolve/reject outside, for answers a test releases later. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
