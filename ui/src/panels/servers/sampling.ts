//! The model servers may ask (MCP sampling), as the Servers panel's "Model for sampling"
//! form edits it: the form's text fields, checked field by field before anything is sent
//! (the backend checks again, `crates/app/src/sampling.rs`), and the one-line summary of
//! what is configured. The API key is only ever the *name* of an environment variable:
//! the studio writes `${env:NAME}` and never holds a key. Pure functions.

import type { SamplingProvider, SamplingSettings } from '../../backend';

/** The form as typed. */
export interface ProviderForm {
  baseUrl: string;
  model: string;
  /** The name of the environment variable that holds the key; empty: no key. */
  keyVar: string;
  timeoutMs: string;
  maxTokens: string;
}

export type ProviderField = keyof ProviderForm;

/** What the form says of each field that does not pass. */
export type FieldProblems = Partial<Record<ProviderField, string>>;

/** The default request timeout of the backend (`DEFAULT_TIMEOUT`), shown as the placeholder. */
export const DEFAULT_TIMEOUT_MS = 120_000;

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Whether what was typed looks like a key rather than a variable's name: a known key
 * prefix (`sk-`, `sk_live_`, `ghp_`, `xoxb-`…), or a long mix of lower case, upper case and
 * digits (`AIzaSy…`); variable names are words (`OPENAI_API_KEY`).
 */
export function looksLikeAKey(t: string): boolean {
  if (/^(sk|pk|rk|ghp|gho|ghs|github_pat|xox[a-z])[-_]/.test(t)) return true;
  if (t.length >= 20 && t.includes('-')) return true;
  return t.length >= 24 && /[a-z]/.test(t) && /[A-Z]/.test(t) && /\d/.test(t);
}

/** The form for what is configured (empty fields when nothing is). */
export function formOf(settings: SamplingSettings | null): ProviderForm {
  const p = settings?.provider;
  return {
    baseUrl: p?.base_url ?? '',
    model: p?.model ?? '',
    keyVar: p?.api_key_env ?? '',
    timeoutMs: p?.timeout_ms != null ? String(p.timeout_ms) : '',
    maxTokens: p?.max_tokens != null ? String(p.max_tokens) : '',
  };
}

/**
 * The variable's name out of what was typed: `OPENAI_API_KEY`, also when pasted as
 * `$OPENAI_API_KEY` or `${env:OPENAI_API_KEY}`; `null` for an empty field.
 */
export function variableName(typed: string): string | null {
  const t = typed.trim();
  if (!t) return null;
  const wrapped = /^\$\{env:(.*)\}$/.exec(t) ?? /^\$\{(.*)\}$/.exec(t) ?? /^\$(.*)$/.exec(t);
  return (wrapped ? wrapped[1]! : t).trim();
}

function positiveInt(typed: string, max: number): number | null | 'bad' {
  const t = typed.trim().replace(/[_\s]/g, '');
  if (!t) return null;
  if (!/^\d+$/.test(t)) return 'bad';
  const n = Number(t);
  return n >= 1 && n <= max ? n : 'bad';
}

/** The provider to send, or what is wrong with each field that does not pass. */
export function checkProviderForm(form: ProviderForm): { provider: SamplingProvider } | { problems: FieldProblems } {
  const problems: FieldProblems = {};
  const baseUrl = form.baseUrl.trim();
  if (!baseUrl) {
    problems.baseUrl = 'Give the endpoint’s base URL, the part before /chat/completions (e.g. http://localhost:11434/v1).';
  } else {
    let url: URL | null = null;
    try {
      url = new URL(baseUrl);
    } catch {
      url = null;
    }
    if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
      problems.baseUrl = 'Not an http(s) URL: write it whole, e.g. http://localhost:11434/v1 or https://api.openai.com/v1.';
    }
  }
  const model = form.model.trim();
  if (!model) problems.model = 'Name the model to ask, e.g. llama3.2 or gpt-4o-mini.';
  const keyVar = variableName(form.keyVar);
  if (keyVar !== null) {
    if (looksLikeAKey(keyVar)) {
      problems.keyVar = 'This looks like a key itself. Write the name of the environment variable that holds it (e.g. OPENAI_API_KEY); the key is never stored.';
    } else if (!VARIABLE.test(keyVar)) {
      problems.keyVar = 'A variable name is letters, digits and _, not starting with a digit (e.g. OPENAI_API_KEY).';
    }
  }
  const timeout = positiveInt(form.timeoutMs, 4_294_967_295);
  if (timeout === 'bad') problems.timeoutMs = 'Milliseconds, a whole number of at least 1 (empty: 120000).';
  const maxTokens = positiveInt(form.maxTokens, 4_294_967_295);
  if (maxTokens === 'bad') problems.maxTokens = 'A whole number of at least 1 (empty: as much as the server asks).';
  if (Object.keys(problems).length > 0) return { problems };
  return {
    provider: {
      base_url: baseUrl,
      model,
      api_key_env: keyVar,
      timeout_ms: timeout as number | null,
      max_tokens: maxTokens as number | null,
    },
  };
}

/** One line on what answers servers' requests for a model. */
export function providerSummary(settings: SamplingSettings | null): string {
  const p = settings?.provider;
  if (!p) return 'No model configured: a server’s request is shown to you as a question on its step, and what you write is the answer.';
  const key = p.api_key_env ? ` · key from $${p.api_key_env}${settings!.key_set ? '' : ' (not set)'}` : ' · no key';
  return `${p.model} at ${p.base_url}${key}`;
}
