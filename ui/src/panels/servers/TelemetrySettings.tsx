//! The Servers panel's "Telemetry" section: where the runs' traces and metrics go
//! (OpenTelemetry, OTLP) — kept in the `telemetry` section of the data folder's
//! `settings.json` — as one line, and a form to change it: the collector's base URL, the
//! protocol, headers whose values are the *names* of environment variables (never a
//! token), and whether tool arguments and results go on the spans. Looks and behaves like
//! the "Model for sampling" section above it (`SamplingSettings.tsx`): checked field by
//! field before it is sent (`telemetry.ts`); the backend checks again and its message
//! names the field; a change applies from the next run.
//!
//! Test hooks: `telemetry-settings`, `telemetry-summary`, `telemetry-source`,
//! `telemetry-problem`, `telemetry-start-problem`, `telemetry-vars-unset`,
//! `telemetry-edit`, `telemetry-form`, `telemetry-endpoint`, `telemetry-protocol`,
//! `telemetry-headers`, `telemetry-capture`, `telemetry-capture-warning`,
//! `telemetry-save`, `telemetry-cancel`, `telemetry-remove`, `telemetry-error` (one per
//! problem, `data-field`).

import { memo, useEffect, useRef, useState } from 'react';
import { EditorFooter, useSettingsEditor } from './SettingsEditor';
import { serversStore, saveTelemetry, useServers } from './store';
import {
  checkTelemetryForm,
  telemetryFormOf,
  telemetrySource,
  telemetrySummary,
  type Protocol,
  type TelemetryField,
  type TelemetryForm,
} from './telemetry';

const LABELS: Record<TelemetryField, string> = { endpoint: 'Collector endpoint', headers: 'Headers' };

export const TelemetrySettingsSection = memo(function TelemetrySettingsSection() {
  const settings = useServers((s) => s.telemetry);
  const loadError = useServers((s) => s.telemetryError);
  const focus = useServers((s) => s.panelFocus);
  const [editing, setEditing] = useState(focus === 'telemetry');
  const section = useRef<HTMLElement>(null);
  useEffect(() => {
    if (focus !== 'telemetry') return;
    setEditing(true);
    serversStore.setState({ panelFocus: null });
  }, [focus]);
  const configured = !!settings?.config;
  const on = !!settings?.sending_to;
  const source = telemetrySource(settings);
  const unset = settings?.missing_vars ?? [];
  return (
    <section ref={section} className="sampling-settings telemetry-settings" data-testid="telemetry-settings" aria-labelledby="telemetry-settings-title">
      <div className="sampling-head">
        <h3 id="telemetry-settings-title">Telemetry</h3>
        {settings?.problem || settings?.start_problem ? (
          <span className="badge badge-warn">cannot be used</span>
        ) : on ? (
          <span className="badge badge-ok">on</span>
        ) : settings ? (
          <span className="badge" title="Nothing is sent anywhere unless a collector is configured">
            off
          </span>
        ) : null}
        {!editing ? (
          <button type="button" data-testid="telemetry-edit" onClick={() => setEditing(true)} disabled={settings === null && !loadError}>
            {configured ? 'Edit' : 'Configure…'}
          </button>
        ) : null}
      </div>
      <p className="muted sampling-what">
        Each run becomes a trace — a span per step and per MCP call — sent over OTLP to an OpenTelemetry collector (Jaeger, Tempo,
        Honeycomb…). The Run tab shows the run’s trace id.
      </p>
      <p className={`sampling-summary${on ? '' : ' is-none'}`} data-testid="telemetry-summary" data-on={on ? 'true' : 'false'}>
        {settings ? telemetrySummary(settings) : loadError ? '' : 'Reading the settings…'}
      </p>
      {source ? (
        <p className="muted telemetry-source" data-testid="telemetry-source">
          {source}
        </p>
      ) : null}
      {loadError ? (
        <p className="inline-error" role="alert">
          {loadError}
        </p>
      ) : null}
      {settings?.problem ? (
        <p className="inline-error" role="alert" data-testid="telemetry-problem">
          {settings.problem} — until it is fixed, this section is not used.{' '}
          {settings.writable ? 'Save the settings here to write the section again.' : 'Fix or remove the file, then open this panel again.'}
        </p>
      ) : null}
      {settings?.start_problem ? (
        <p className="inline-error" role="alert" data-testid="telemetry-start-problem">
          {settings.start_problem}
        </p>
      ) : null}
      {unset.length > 0 && !editing ? (
        <p className="inline-warning" data-testid="telemetry-vars-unset">
          {unset.map((v) => `$${v}`).join(', ')} {unset.length === 1 ? 'is' : 'are'} not set in the engine’s environment: telemetry stays off
          until {unset.length === 1 ? 'it is' : 'they are'} (start the studio with {unset.length === 1 ? 'it' : 'them'} set).
        </p>
      ) : null}
      {editing ? (
        <TelemetryEditor key={settings?.path ?? ''} initial={telemetryFormOf(settings)} configured={configured} onDone={() => setEditing(false)} />
      ) : null}
      {settings ? <p className="sampling-path muted">Kept in {settings.path}; a change applies from the next run.</p> : null}
    </section>
  );
});

function TelemetryEditor({ initial, configured, onDone }: { initial: TelemetryForm; configured: boolean; onDone: () => void }) {
  const [form, setForm] = useState(initial);
  const editor = useSettingsEditor<TelemetryField>(onDone);
  const { problems } = editor;

  const submit = () => {
    const checked = checkTelemetryForm(form);
    if ('problems' in checked) return editor.showProblems(checked.problems);
    return editor.save(async () => {
      const saved = await saveTelemetry(checked.config);
      return `saved the telemetry settings: ${saved.sending_to ? `traces go to ${saved.sending_to}` : 'off'}`;
    });
  };

  const remove = () =>
    editor.remove(
      'Remove the telemetry settings?',
      'Runs are then traced only when the engine’s environment names a collector (OTEL_EXPORTER_OTLP_ENDPOINT).',
      async () => {
        await saveTelemetry(null);
        return 'removed the telemetry settings';
      },
    );

  return (
    <form
      ref={editor.formBox}
      className="server-editor sampling-form telemetry-form"
      data-testid="telemetry-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <div className="sampling-grid">
        <label htmlFor="telemetry-endpoint" className="sampling-wide">
          <span>{LABELS.endpoint}</span>
          <input
            id="telemetry-endpoint"
            data-testid="telemetry-endpoint"
            className="mono"
            value={form.endpoint}
            onChange={(e) => setForm((f) => ({ ...f, endpoint: e.target.value }))}
            placeholder="http://localhost:4318"
            inputMode="url"
            spellCheck={false}
            autoComplete="off"
            aria-invalid={problems.endpoint ? true : undefined}
          />
          <small className="muted">
            The collector’s base URL; /v1/traces and /v1/metrics are added. Empty: the engine’s OTEL_EXPORTER_OTLP_ENDPOINT, if set.
          </small>
        </label>
        <label htmlFor="telemetry-protocol">
          <span>Protocol</span>
          <select
            id="telemetry-protocol"
            data-testid="telemetry-protocol"
            value={form.protocol}
            onChange={(e) => setForm((f) => ({ ...f, protocol: e.target.value as Protocol }))}
          >
            <option value="">default (http/protobuf)</option>
            <option value="http/protobuf">http/protobuf</option>
            <option value="grpc">grpc</option>
          </select>
          <small className="muted">Default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (port 4318; gRPC is 4317).</small>
        </label>
        <label htmlFor="telemetry-headers">
          <span>{LABELS.headers}</span>
          <textarea
            id="telemetry-headers"
            data-testid="telemetry-headers"
            className="mono"
            rows={2}
            value={form.headers}
            onChange={(e) => setForm((f) => ({ ...f, headers: e.target.value }))}
            placeholder={'x-honeycomb-team=${env:HONEYCOMB_KEY}'}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={problems.headers ? true : undefined}
          />
          <small className="muted">
            One a line, <code>{'name=${env:VARIABLE}'}</code>: the value is read from the environment, never kept in a file.
          </small>
        </label>
        <label htmlFor="telemetry-capture" className="sampling-wide telemetry-capture">
          <input
            id="telemetry-capture"
            type="checkbox"
            data-testid="telemetry-capture"
            checked={form.capturePayloads}
            onChange={(e) => setForm((f) => ({ ...f, capturePayloads: e.target.checked }))}
          />
          <span>Put tool arguments and results on the spans</span>
        </label>
        <p className={`sampling-wide telemetry-capture-warning ${form.capturePayloads ? 'inline-warning' : 'muted'}`} data-testid="telemetry-capture-warning">
          Arguments and results are then sent to the collector, with any secrets or personal data in them.
        </p>
      </div>
      <EditorFooter
        prefix="telemetry"
        labels={LABELS}
        removeLabel="Remove settings"
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
