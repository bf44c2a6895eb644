//! Where runs' traces go (OpenTelemetry), as the Servers panel's "Telemetry" form edits
//! it: the form's fields, checked before anything is sent (the backend checks again,
//! `crates/app/src/telemetry.rs`), and the one-line summary of what is in effect. A
//! header's value is only ever the *name* of an environment variable: the studio writes
//! `${env:NAME}` and never holds a token. Pure functions.

import type { TelemetryConfig, TelemetrySettings } from '../../backend';
import { looksLikeAKey, variableName } from './sampling';

export type Protocol = '' | 'http/protobuf' | 'grpc';

/** The form as typed. */
export interface TelemetryForm {
  endpoint: string;
  /** `''`: as the environment says (`OTEL_EXPORTER_OTLP_PROTOCOL`), else http/protobuf. */
  protocol: Protocol;
  /** One header a line: `name=${env:VAR}` (also `name=VAR` or `name=$VAR`). */
  headers: string;
  capturePayloads: boolean;
}

export type TelemetryField = 'endpoint' | 'headers';
export type TelemetryProblems = Partial<Record<TelemetryField, string>>;

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/** The form for what is written (empty fields when nothing is). */
export function telemetryFormOf(settings: TelemetrySettings | null): TelemetryForm {
  const c = settings?.config;
  return {
    endpoint: c?.endpoint ?? '',
    protocol: c?.protocol ?? '',
    headers: (c?.headers ?? []).map((h) => `${h.name}=\${env:${h.env}}`).join('\n'),
    capturePayloads: c?.capture_payloads ?? false,
  };
}

/** The section to send, or what is wrong with each field that does not pass. */
export function checkTelemetryForm(form: TelemetryForm): { config: TelemetryConfig } | { problems: TelemetryProblems } {
  const problems: TelemetryProblems = {};
  const endpoint = form.endpoint.trim();
  if (endpoint) {
    let url: URL | null = null;
    try {
      url = new URL(endpoint);
    } catch {
      url = null;
    }
    if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
      problems.endpoint = 'Not an http(s) URL: write the collector’s base URL whole, e.g. http://localhost:4318.';
    }
  }
  const headers: { name: string; env: string }[] = [];
  const lines = form.headers.split('\n').map((l) => l.trim()).filter((l) => l);
  for (const line of lines) {
    const at = line.indexOf('=');
    const name = (at < 0 ? line : line.slice(0, at)).trim();
    const variable = at < 0 ? null : variableName(line.slice(at + 1));
    if (!HEADER.test(name)) {
      problems.headers = `“${name || line}” is not a header name: write name=\${env:VARIABLE}, e.g. x-honeycomb-team=\${env:HONEYCOMB_KEY}.`;
    } else if (variable === null) {
      problems.headers = `${name}: give the environment variable that holds the value, e.g. ${name}=\${env:MY_TOKEN}.`;
    } else if (looksLikeAKey(variable)) {
      problems.headers = `${name}: this looks like a token itself. Write the name of the environment variable that holds it; the value is never stored.`;
    } else if (!VARIABLE.test(variable)) {
      problems.headers = `${name}: a variable name is letters, digits and _, not starting with a digit (e.g. HONEYCOMB_KEY).`;
    } else if (headers.some((h) => h.name.toLowerCase() === name.toLowerCase())) {
      problems.headers = `${name} is given twice; keep one.`;
    } else {
      headers.push({ name, env: variable });
    }
    if (problems.headers) break;
  }
  if (Object.keys(problems).length > 0) return { problems };
  return {
    config: {
      endpoint: endpoint || null,
      protocol: form.protocol || null,
      headers,
      capture_payloads: form.capturePayloads,
    },
  };
}

/** One line on where the runs' traces go now. */
export function telemetrySummary(settings: TelemetrySettings | null): string {
  if (!settings) return '';
  if (!settings.sending_to) return 'Off: runs are not traced and nothing is sent anywhere.';
  const payloads = settings.config?.capture_payloads ? ' · with arguments and results' : '';
  return `Traces go to ${settings.sending_to}${payloads}`;
}

/** Where the endpoint in effect comes from, when it is not this section. */
export function telemetrySource(settings: TelemetrySettings | null): string | null {
  if (!settings) return null;
  if (settings.flag_endpoint) return `The engine was started with --otlp ${settings.flag_endpoint}, which wins over this setting until it restarts.`;
  if (!settings.config?.endpoint && settings.env_endpoint && settings.sending_to) {
    return `From the engine’s environment: OTEL_EXPORTER_OTLP_ENDPOINT=${settings.env_endpoint}. An endpoint set here wins over it.`;
  }
  return null;
}
