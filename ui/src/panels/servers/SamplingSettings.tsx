//! The Servers panel's "Model for sampling" section: what answers a server that asks for a
//! model completion during a run (MCP sampling) — any OpenAI-compatible endpoint, kept in
//! the `sampling` section of the data folder's `settings.json` — as one line, and a form
//! to change it: base URL, model, the *name* of the environment variable holding the API
//! key (never a key), timeout and a cap on tokens. Checked field by field before it is
//! sent (`sampling.ts`); the backend checks again and its message names the field.
//! Nothing moves under the pointer: the buttons sit above the problems, which appear
//! below them.
//!
//! Test hooks: `sampling-settings`, `sampling-summary`, `sampling-problem`,
//! `sampling-key-unset`, `sampling-edit`, `sampling-form`, `sampling-base-url`,
//! `sampling-model`, `sampling-key-var`, `sampling-timeout-ms`, `sampling-max-tokens`,
//! `sampling-save`, `sampling-cancel`, `sampling-remove`, `sampling-error` (one per
//! problem, `data-field`).

import { memo, useEffect, useState } from 'react';
import { checkProviderForm, DEFAULT_TIMEOUT_MS, formOf, providerSummary, type ProviderField, type ProviderForm } from './sampling';
import { EditorFooter, useSettingsEditor } from './SettingsEditor';
import { saveSamplingProvider, serversStore, useServers } from './store';

const LABELS: Record<ProviderField, string> = {
  baseUrl: 'Base URL',
  model: 'Model',
  keyVar: 'API key variable',
  timeoutMs: 'Timeout (ms)',
  maxTokens: 'Max tokens',
};

export const SamplingSettingsSection = memo(function SamplingSettingsSection() {
  const settings = useServers((s) => s.sampling);
  const loadError = useServers((s) => s.samplingError);
  const focus = useServers((s) => s.panelFocus);
  const [editing, setEditing] = useState(focus === 'sampling');
  useEffect(() => {
    if (focus !== 'sampling') return;
    // The form scrolls itself into view when it opens.
    setEditing(true);
    serversStore.setState({ panelFocus: null });
  }, [focus]);
  const provider = settings?.provider ?? null;
  const keyUnset = !!provider?.api_key_env && !settings?.key_set;
  return (
    <section className="sampling-settings" data-testid="sampling-settings" aria-labelledby="sampling-settings-title">
      <div className="sampling-head">
        <h3 id="sampling-settings-title">Model for sampling</h3>
        {settings?.problem ? (
          <span className="badge badge-warn">cannot be used</span>
        ) : provider ? (
          <span className="badge badge-ok">configured</span>
        ) : settings ? (
          <span className="badge" title="With no model, a server's request is shown to you as a question">
            you answer
          </span>
        ) : null}
        {!editing ? (
          <button type="button" data-testid="sampling-edit" onClick={() => setEditing(true)} disabled={settings === null && !loadError}>
            {provider ? 'Edit' : 'Configure…'}
          </button>
        ) : null}
      </div>
      <p className="muted sampling-what">
        A server whose switch <b>May ask the model</b> is on can ask for a completion during a run. This model answers it: any
        OpenAI-compatible endpoint (Ollama, LM Studio, OpenAI…).
      </p>
      <p className={`sampling-summary${provider ? '' : ' is-none'}`} data-testid="sampling-summary" data-configured={provider ? 'true' : 'false'}>
        {settings ? providerSummary(settings) : loadError ? '' : 'Reading the settings…'}
      </p>
      {loadError ? (
        <p className="inline-error" role="alert">
          {loadError}
        </p>
      ) : null}
      {settings?.problem ? (
        <p className="inline-error" role="alert" data-testid="sampling-problem">
          {settings.problem} — until it is fixed, servers that ask get SAMPLING_UNAVAILABLE.{' '}
          {settings.writable ? 'Save the model here to write the section again.' : 'Fix or remove the file, then open this panel again.'}
        </p>
      ) : null}
      {keyUnset && !editing ? (
        <p className="inline-warning" data-testid="sampling-key-unset">
          ${provider!.api_key_env} is not set in the studio’s environment: requests to the model fail until it is (start the studio with it set).
        </p>
      ) : null}
      {editing ? <ProviderEditor key={settings?.path ?? ''} initial={formOf(settings)} configured={provider !== null} onDone={() => setEditing(false)} /> : null}
      {settings ? <p className="sampling-path muted">Kept in {settings.path}; a change applies from the next run.</p> : null}
    </section>
  );
});

function ProviderEditor({ initial, configured, onDone }: { initial: ProviderForm; configured: boolean; onDone: () => void }) {
  const [form, setForm] = useState(initial);
  const editor = useSettingsEditor<ProviderField>(onDone);
  const { problems } = editor;
  const set = (field: ProviderField) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [field]: e.target.value }));

  const submit = () => {
    const checked = checkProviderForm(form);
    if ('problems' in checked) return editor.showProblems(checked.problems);
    return editor.save(async () => `saved the model for sampling: ${providerSummary(await saveSamplingProvider(checked.provider))}`);
  };

  const remove = () =>
    editor.remove(
      'Remove the model for sampling?',
      'Servers that may ask the model will have their requests shown to you as questions on their steps instead.',
      async () => {
        await saveSamplingProvider(null);
        return 'removed the model for sampling: servers’ requests are shown to you';
      },
    );

  const field = (name: ProviderField, props: { placeholder: string; inputMode?: 'numeric' | 'url' | 'text'; mono?: boolean }) => (
    <input
      id={`sampling-${name}`}
      data-testid={`sampling-${kebab(name)}`}
      value={form[name]}
      onChange={set(name)}
      placeholder={props.placeholder}
      inputMode={props.inputMode}
      spellCheck={false}
      autoComplete="off"
      className={props.mono ? 'mono' : undefined}
      aria-invalid={problems[name] ? true : undefined}
    />
  );

  return (
    <form
      ref={editor.formBox}
      className="server-editor sampling-form"
      data-testid="sampling-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <div className="sampling-grid">
        <label htmlFor="sampling-baseUrl" className="sampling-wide">
          <span>{LABELS.baseUrl}</span>
          {field('baseUrl', { placeholder: 'http://localhost:11434/v1', inputMode: 'url', mono: true })}
          <small className="muted">The part before /chat/completions. Ollama: http://localhost:11434/v1 · LM Studio: http://localhost:1234/v1 · OpenAI: https://api.openai.com/v1</small>
        </label>
        <label htmlFor="sampling-model">
          <span>{LABELS.model}</span>
          {field('model', { placeholder: 'llama3.2', mono: true })}
          <small className="muted">Asked for every request; a server’s model preferences are only hints.</small>
        </label>
        <label htmlFor="sampling-keyVar">
          <span>{LABELS.keyVar}</span>
          {field('keyVar', { placeholder: 'OPENAI_API_KEY (empty: no key)', mono: true })}
          <small className="muted" data-testid="sampling-key-note">
            The <b>name</b> of an environment variable, never the key itself: mcpflow stores <code>{'${env:NAME}'}</code> and reads the key from its
            environment when it asks the model.
          </small>
        </label>
        <label htmlFor="sampling-timeoutMs">
          <span>{LABELS.timeoutMs}</span>
          {field('timeoutMs', { placeholder: String(DEFAULT_TIMEOUT_MS), inputMode: 'numeric' })}
        </label>
        <label htmlFor="sampling-maxTokens">
          <span>{LABELS.maxTokens}</span>
          {field('maxTokens', { placeholder: 'as the server asks', inputMode: 'numeric' })}
        </label>
      </div>
      <EditorFooter
        prefix="sampling"
        labels={LABELS}
        removeLabel="Remove model"
        configured={configured}
        busy={editor.busy}
        problems={problems}
        error={editor.error}
        onRemove={() => void remove()}
        onCancel={onDone}
      />
    </form>
  );
}

/** `baseUrl` → `base-url` (the test hooks' spelling). */
function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
