//! Servers: the configured list, what each offers (for the palette), connection tests,
//! and the consent prompt. Shared by the palette and the servers panel.
//!
//! Consent: nothing asks the backend to start an unapproved stdio server. Approve and
//! Test on an unapproved server first open the consent prompt with the exact command
//! line; only its Approve button calls `approve_server`.

import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import {
  backend,
  errorMessage,
  inTauri,
  report,
  toBackendError,
  type AuthStatus,
  type SamplingProvider,
  type SamplingSettings,
  type ServerInfo,
  type TelemetryConfig,
  type TelemetrySettings,
  type ServerOffer,
  type ToolInfo,
} from '../../backend';

import type { Blueprint } from '../../doc/types';
import { AUTH_REQUIRED, authReason } from './authtext';

/** A connection test: running, what it found (the protocol revision spoken), or its error. */
export type TestState =
  | { state: 'running' }
  | { state: 'ok'; tools: ToolInfo[]; protocol: string | null }
  | { state: 'error'; code: string; message: string };

/** A sign-in in progress or the way the last one failed. */
export type SignIn = { state: 'waiting' } | { state: 'error'; code: string; message: string };

export interface AuthSlice {
  /** The login of each configured HTTP server, by name. */
  logins: Record<string, AuthStatus>;
  loginsError: string | null;
  signIns: Record<string, SignIn>;
  /** Servers a test, listing or run found needing a sign-in: the server's reason. */
  authNeeded: Record<string, string>;
}

export function initialAuthSlice(): AuthSlice {
  return { logins: {}, loginsError: null, signIns: {}, authNeeded: {} };
}



export interface Consent {
  server: string;
  /** The exact command line shown (what gets approved). */
  command: string;
  /** Test the server once approved. */
  then: 'test' | null;
  /**
   * Set when a run asks: the document whose run would start the server (its own
   * `servers` entry may be what starts), approved as that run would start it.
   */
  doc?: Blueprint;
  busy: boolean;
  /** The command changed since the prompt was opened: shown again, to confirm again. */
  changed: boolean;
  error: string | null;
}

interface ServersBase {
  servers: ServerInfo[];
  serversLoaded: boolean;
  serversError: string | null;
  offers: ServerOffer[];
  offersLoading: boolean;
  offersLoaded: boolean;
  offersError: string | null;
  tests: Record<string, TestState>;
  consent: Consent | null;
  panelOpen: boolean;
  /** Open the panel at its "Model for sampling" or "Telemetry" section, with the form open. */
  panelFocus: 'sampling' | 'telemetry' | null;
  /** The sampling provider of `settings.json` (`null` until read). */
  sampling: SamplingSettings | null;
  samplingError: string | null;
  /** The telemetry section of `settings.json` and where spans go (`null` until read). */
  telemetry: TelemetrySettings | null;
  telemetryError: string | null;
  /** Servers whose switch "may ask the model" is being saved. */
  switchBusy: Record<string, true>;
  /** Why a server's switch could not be saved. */
  switchErrors: Record<string, string>;
}

export type ServersState = ServersBase & AuthSlice;

/** The state before anything was loaded (also what tests reset to). */
export function initialServersState(): ServersState {
  return {
    servers: [],
    serversLoaded: false,
    serversError: null,
    offers: [],
    offersLoading: false,
    offersLoaded: false,
    offersError: null,
    tests: {},
    consent: null,
    panelOpen: false,
    panelFocus: null,
    sampling: null,
    samplingError: null,
    telemetry: null,
    telemetryError: null,
    switchBusy: {},
    switchErrors: {},
    ...initialAuthSlice(),
  };
}

export const serversStore = createStore<ServersState>()(initialServersState);

export function useServers<T>(selector: (s: ServersState) => T): T {
  return useStore(serversStore, selector);
}

/** Remembers that `name` needs a sign-in (from an `AUTH_REQUIRED` error's message). */
export function noteAuthNeeded(name: string, message: string): void {
  serversStore.setState((s) => ({ authNeeded: { ...s.authNeeded, [name]: authReason(message) } }));
}

export const openServersPanel = () => serversStore.setState({ panelOpen: true, panelFocus: null });
/** Opens the Servers panel at its "Model for sampling" section, the form open. */
export const openSamplingSettings = () => serversStore.setState({ panelOpen: true, panelFocus: 'sampling' });
/** Opens the Servers panel at its "Telemetry" section, the form open. */
export const openTelemetrySettings = () => serversStore.setState({ panelOpen: true, panelFocus: 'telemetry' });
export const closeServersPanel = () => serversStore.setState({ panelOpen: false, panelFocus: null });

// Only the latest refresh of each kind lands (a slow answer must not overwrite a newer one).
let serversSeq = 0;
let offersSeq = 0;

export async function refreshServers(): Promise<ServerInfo[] | null> {
  if (!inTauri()) return null;
  const mine = ++serversSeq;
  try {
    const servers = await backend.listServers();
    if (mine === serversSeq) serversStore.setState({ servers, serversLoaded: true, serversError: null });
    return servers;
  } catch (e) {
    if (mine === serversSeq) serversStore.setState({ serversError: errorMessage(e), serversLoaded: true });
    return null;
  }
}

/** Lists what every server offers (approved servers are started by the backend). */
export async function refreshOffers(): Promise<void> {
  if (!inTauri()) return;
  const mine = ++offersSeq;
  serversStore.setState({ offersLoading: true });
  try {
    const offers = await backend.serverOffers();
    if (mine === offersSeq) serversStore.setState({ offers, offersLoading: false, offersLoaded: true, offersError: null });
    for (const o of offers) if (o.error?.code === AUTH_REQUIRED) noteAuthNeeded(o.server, o.error.message);
  } catch (e) {
    if (mine === offersSeq) serversStore.setState({ offersLoading: false, offersLoaded: true, offersError: errorMessage(e) });
  }
}

export async function refreshAll(): Promise<void> {
  await Promise.all([refreshServers(), refreshOffers()]);
}

/** Stores the list a command answered with (put/delete return the new list). */
const setServers = (servers: ServerInfo[]) => serversStore.setState({ servers, serversLoaded: true, serversError: null });

async function findServer(name: string): Promise<ServerInfo | undefined> {
  const known = serversStore.getState().servers.find((s) => s.name === name);
  if (known) return known;
  return (await refreshServers())?.find((s) => s.name === name);
}

/** Whether starting this server needs the user's consent first. */
export const needsConsent = (s: ServerInfo | undefined): s is ServerInfo & { command: string } =>
  !!s && !s.approved && typeof s.command === 'string';

/** Opens the consent prompt for a server (from the palette or the servers panel). */
export async function requestConsent(name: string, then: Consent['then'] = null): Promise<void> {
  const server = await findServer(name);
  if (!server) {
    report('error', `no server named ${name} is configured`);
    return;
  }
  if (!needsConsent(server)) {
    if (then === 'test') await testServer(name);
    else report('info', `${name} needs no approval`);
    return;
  }
  serversStore.setState({ consent: { server: name, command: server.command, then, busy: false, changed: false, error: null } });
}

export const cancelConsent = () => serversStore.setState({ consent: null });

/**
 * Asks consent for a server a run of `doc` would start (`server.command` is what it
 * starts); resolves when the prompt closes: true when approved.
 */
export function requestRunConsent(doc: Blueprint, server: string, command: string): Promise<boolean> {
  serversStore.setState({ consent: { server, command, then: null, doc, busy: false, changed: false, error: null } });
  return new Promise((resolve) => {
    let approved = false;
    const stop = serversStore.subscribe((now, before) => {
      if (before.consent?.busy && before.consent.server === server && !now.consent) approved = true;
      if (now.consent?.server === server && now.consent.doc === doc) return;
      stop();
      resolve(approved && !now.consent);
    });
  });
}

/**
 * The user approved the command shown. If the configured command changed since it was
 * shown, the prompt shows the new one and waits for another confirmation instead.
 */
export async function approveConsent(): Promise<boolean> {
  const c = serversStore.getState().consent;
  if (!c || c.busy) return false;
  const update = (patch: Partial<Consent>) => {
    const now = serversStore.getState().consent;
    if (now && now.server === c.server) serversStore.setState({ consent: { ...now, ...patch } });
  };
  update({ busy: true, error: null });
  if (c.doc) return approveForRun(c, c.doc, update);
  try {
    const fresh = (await backend.listServers()).find((s) => s.name === c.server);
    setServersQuietly(fresh);
    if (!fresh) {
      update({ busy: false, error: `${c.server} is no longer configured` });
      return false;
    }
    if (fresh.command !== c.command) {
      if (!needsConsent(fresh)) {
        serversStore.setState({ consent: null });
        await refreshAll();
        return false;
      }
      update({ busy: false, command: fresh.command, changed: true });
      return false;
    }
    const approved = await backend.approveServer(c.server);
    serversStore.setState({ consent: null });
    report('success', `approved ${c.server}: ${approved}`);
    await refreshAll();
    if (c.then === 'test') await testServer(c.server);
    return true;
  } catch (e) {
    update({ busy: false, error: errorMessage(e) });
    return false;
  }

  function setServersQuietly(fresh: ServerInfo | undefined) {
    if (!fresh) return;
    const list = serversStore.getState().servers;
    if (list.some((s) => s.name === fresh.name)) setServers(list.map((s) => (s.name === fresh.name ? fresh : s)));
  }
}

/** Approves a server as a run of `doc` starts it, if it still starts the command shown. */
async function approveForRun(c: Consent, doc: Blueprint, update: (patch: Partial<Consent>) => void): Promise<boolean> {
  try {
    const fresh = (await backend.runServers(doc)).find((s) => s.name === c.server);
    if (!fresh || fresh.command !== c.command) {
      update({ busy: false, command: fresh?.command ?? c.command, changed: true, error: fresh ? null : `${c.server} is no longer used` });
      return false;
    }
    const approved = await backend.approveRunServer(doc, c.server);
    serversStore.setState({ consent: null });
    report('success', `approved ${c.server}: ${approved}`);
    void refreshAll();
    return true;
  } catch (e) {
    update({ busy: false, error: errorMessage(e) });
    return false;
  }
}

/** Tests a connection; an unapproved stdio server asks for consent first. */
export async function testOrAsk(name: string): Promise<void> {
  const server = await findServer(name);
  if (needsConsent(server)) return requestConsent(name, 'test');
  return testServer(name);
}

/** Connects and lists the tools (the backend starts only approved servers). */
export async function testServer(name: string): Promise<void> {
  const set = (t: TestState) => serversStore.setState((s) => ({ tests: { ...s.tests, [name]: t } }));
  set({ state: 'running' });
  try {
    const found = await backend.testServer(name);
    set({ state: 'ok', tools: found.tools, protocol: found.protocol_version });
  } catch (e) {
    const err = toBackendError(e);
    set({ state: 'error', code: err.code, message: err.message });
    if (err.code === AUTH_REQUIRED) noteAuthNeeded(name, err.message);
  }
}

/** Adds or replaces a server; a rename removes the old entry. Throws the backend's error. */
export async function putServer(name: string, config: unknown, previous?: string): Promise<void> {
  let servers = await backend.putServer(name, config);
  if (previous && previous !== name) servers = await backend.deleteServer(previous);
  setServers(servers);
  serversStore.setState((s) => {
    const tests = { ...s.tests };
    delete tests[name];
    if (previous) delete tests[previous];
    return { tests };
  });
  void refreshOffers();
}

export async function deleteServer(name: string): Promise<void> {
  try {
    setServers(await backend.deleteServer(name));
    report('info', `removed ${name}`);
    void refreshOffers();
  } catch (e) {
    report('error', `could not remove ${name}: ${errorMessage(e)}`);
  }
}

export async function importServersFile(): Promise<void> {
  try {
    const names = await backend.importServers();
    if (!names) return;
    report(
      'success',
      names.length
        ? `imported ${names.length} server${names.length === 1 ? '' : 's'}: ${names.join(', ')} (stdio servers need approval before they start)`
        : 'the file has no servers',
    );
    await refreshAll();
  } catch (e) {
    report('error', `could not import servers: ${errorMessage(e)}`);
  }
}

/** Reads the sampling provider of the data folder's `settings.json`. */
export async function refreshSampling(): Promise<void> {
  if (!inTauri()) return;
  try {
    serversStore.setState({ sampling: await backend.samplingSettings(), samplingError: null });
  } catch (e) {
    serversStore.setState({ samplingError: errorMessage(e) });
  }
}

/** Saves the sampling provider (`null` removes it). Throws the backend's error (it names the field). */
export async function saveSamplingProvider(provider: SamplingProvider | null): Promise<SamplingSettings> {
  const settings = await backend.setSamplingProvider(provider);
  serversStore.setState({ sampling: settings, samplingError: null });
  return settings;
}

/** Reads the telemetry section of the data folder's `settings.json` and where spans go now. */
export async function refreshTelemetry(): Promise<void> {
  if (!inTauri()) return;
  try {
    serversStore.setState({ telemetry: await backend.telemetrySettings(), telemetryError: null });
  } catch (e) {
    serversStore.setState({ telemetryError: errorMessage(e) });
  }
}

/** Saves the telemetry section (`null` removes it). Throws the backend's error (it names the field). */
export async function saveTelemetry(config: TelemetryConfig | null): Promise<TelemetrySettings> {
  const settings = await backend.setTelemetrySettings(config);
  serversStore.setState({ telemetry: settings, telemetryError: null });
  return settings;
}

/** Turns a server's switch "may ask the model" on or off; a failure is kept for its row. */
export async function setServerSampling(name: string, on: boolean): Promise<void> {
  serversStore.setState((s) => {
    const switchErrors = { ...s.switchErrors };
    delete switchErrors[name];
    return { switchBusy: { ...s.switchBusy, [name]: true }, switchErrors };
  });
  try {
    setServers(await backend.setServerSampling(name, on));
  } catch (e) {
    serversStore.setState((s) => ({ switchErrors: { ...s.switchErrors, [name]: errorMessage(e) } }));
  } finally {
    serversStore.setState((s) => {
      const switchBusy = { ...s.switchBusy };
      delete switchBusy[name];
      return { switchBusy };
    });
  }
}
