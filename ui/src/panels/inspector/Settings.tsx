//! Blueprint settings (nothing selected): id, name, description, inputs, servers,
//! defaults (on_error, retry), limits, schedule, expose, output — each committed
//! change one `setSettings` (one undo entry).

import { useId, useMemo, useState } from 'react';
import { docStore, useDoc, type Diagnostic, type EditResult, type Json, type JsonObject, type Limits, type Schedule, type SettingsPatch } from '../../doc';
import { JsonField } from './CodeEditor';
import { Check, FieldDiagnostics, NumberInput, RetryEditor, Row, Section, Select, TextInput } from './fields';
import { namesInScope } from './scope';
import { TemplateOrJson } from './TemplateOrJson';

const BLUEPRINT_ID = /^[a-z0-9][a-z0-9_-]*$/;

const isObject = (v: Json) => !!v && typeof v === 'object' && !Array.isArray(v);

type ScheduleKind = 'none' | 'cron' | 'every' | 'at';

function scheduleKind(s: Schedule | undefined): ScheduleKind {
  if (!s || typeof s !== 'object') return 'none';
  if ('cron' in s) return 'cron';
  if ('every' in s) return 'every';
  if ('at' in s) return 'at';
  return 'none';
}

function ScheduleEditor({ value, set }: { value: Schedule | undefined; set(s: Schedule | undefined): void }) {
  const id = useId();
  const kind = scheduleKind(value);
  const inputs = value && typeof value === 'object' && value.inputs ? { inputs: value.inputs } : {};
  const v = (value ?? {}) as Record<string, string | undefined>;
  const change = (k: ScheduleKind) => {
    if (k === kind) return;
    if (k === 'none') set(undefined);
    else if (k === 'cron') set({ cron: '0 9 * * *', timezone: 'UTC', ...inputs });
    else if (k === 'every') set({ every: '1h', ...inputs });
    else set({ at: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'), ...inputs });
  };
  const required = (t: string) => (t.trim() ? null : 'required');
  return (
    <div className="insp-row" data-pointer="/schedule">
      <label className="insp-label" htmlFor={`${id}-kind`}>
        Schedule
      </label>
      <Select
        id={`${id}-kind`}
        data-testid="settings-schedule-kind"
        value={kind}
        options={[
          { value: 'none', label: 'none' },
          { value: 'cron', label: 'cron' },
          { value: 'every', label: 'every (interval)' },
          { value: 'at', label: 'at (once)' },
        ]}
        onChange={(k) => change((k || 'none') as ScheduleKind)}
      />
      {kind === 'cron' ? (
        <div className="insp-grid">
          <Row label="cron" pointer="/schedule/cron" htmlFor={`${id}-cron`}>
            <TextInput id={`${id}-cron`} data-testid="settings-schedule-cron" value={v.cron} keepEmpty validate={required} onCommit={(t) => set({ ...(value as object), cron: t ?? '' } as Schedule)} placeholder="0 9 * * *" />
          </Row>
          <Row label="timezone" pointer="/schedule/timezone" htmlFor={`${id}-tz`}>
            <TextInput id={`${id}-tz`} value={v.timezone} onCommit={(t) => set({ ...(value as object), timezone: t } as Schedule)} placeholder="UTC" />
          </Row>
        </div>
      ) : kind === 'every' ? (
        <Row label="every" pointer="/schedule/every" htmlFor={`${id}-every`} hint="e.g. 30s, 5m, 1h, 1d">
          <TextInput
            id={`${id}-every`}
            data-testid="settings-schedule-every"
            value={v.every}
            keepEmpty
            validate={(t) => (/^\s*\d+\s*(ms|s|m|h|d)\s*$/.test(t) ? null : 'a number and a unit: ms, s, m, h or d')}
            onCommit={(t) => set({ ...(value as object), every: (t ?? '').trim() } as Schedule)}
          />
        </Row>
      ) : kind === 'at' ? (
        <Row label="at" pointer="/schedule/at" htmlFor={`${id}-at`} hint="RFC 3339, e.g. 2030-01-01T09:00:00Z">
          <TextInput
            id={`${id}-at`}
            data-testid="settings-schedule-at"
            value={v.at}
            keepEmpty
            validate={(t) => (Number.isNaN(Date.parse(t)) ? 'not a date-time' : null)}
            onCommit={(t) => set({ ...(value as object), at: t ?? '' } as Schedule)}
          />
        </Row>
      ) : null}
    </div>
  );
}

export function Settings({ diagnostics }: { diagnostics: readonly Diagnostic[] }) {
  const doc = useDoc((s) => s.doc);
  const id = useId();
  const [notice, setNotice] = useState<string | null>(null);
  const set = (patch: SettingsPatch) => {
    const r: EditResult = docStore.getState().setSettings(patch);
    setNotice(r.ok ? null : r.reason);
  };
  const outputNames = useMemo(() => namesInScope(doc, null), [doc]);
  const byPointer = useMemo(() => {
    const m = new Map<string, Diagnostic[]>();
    for (const d of diagnostics) m.set(d.pointer, [...(m.get(d.pointer) ?? []), d]);
    return m;
  }, [diagnostics]);
  const limits: Limits = doc.limits && typeof doc.limits === 'object' ? doc.limits : {};
  const setLimit = (k: keyof Limits, n: number | undefined) => {
    const next: Record<string, number | undefined> = { ...limits, [k]: n };
    for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
    set({ limits: Object.keys(next).length ? (next as Limits) : undefined });
  };

  return (
    <FieldDiagnostics.Provider value={byPointer}>
      <div className="settings-form" data-testid="settings-form">
        {notice ? (
          <div className="insp-notice" role="alert" data-testid="inspector-notice">
            {notice}
          </div>
        ) : null}
        <Section title="Blueprint">
          <Row label="Id" pointer="/id" htmlFor={`${id}-id`} hint="Lower-case letters, digits, _ and -. The name of the MCP tool when exposed.">
            <TextInput
              id={`${id}-id`}
              data-testid="settings-id"
              value={doc.id}
              keepEmpty
              validate={(t) => (BLUEPRINT_ID.test(t) ? null : 'use a-z, 0-9, _ and -, starting with a letter or digit')}
              onCommit={(t) => t && set({ id: t })}
            />
          </Row>
          <Row label="Name" pointer="/name" htmlFor={`${id}-name`}>
            <TextInput id={`${id}-name`} data-testid="settings-name" value={doc.name} onCommit={(t) => set({ name: t })} />
          </Row>
          <Row label="Description" pointer="/description" htmlFor={`${id}-desc`}>
            <TextInput id={`${id}-desc`} data-testid="settings-description" value={doc.description} multiline onCommit={(t) => set({ description: t })} />
          </Row>
          <Row label="Inputs (JSON Schema)" pointer="/inputs" hint="Validated at run start; defaults applied. Templates read them as inputs.<name>.">
            <JsonField
              value={doc.inputs}
              onCommit={(v) => set({ inputs: v as JsonObject | undefined })}
              check={(v) => (isObject(v) ? null : 'the inputs schema is a JSON object')}
              data-testid="settings-inputs"
              aria-label="Inputs schema (JSON)"
              placeholder='{ "type": "object", "properties": { … } }'
            />
          </Row>
          <Row label="Servers" pointer="/servers" hint="Like mcpServers: { name: { command, args, env } | { url, headers } }. Others come from the app config.">
            <JsonField
              value={doc.servers as Json | undefined}
              onCommit={(v) => set({ servers: v as SettingsPatch['servers'] })}
              check={(v) => (isObject(v) && Object.values(v as JsonObject).every((s) => s !== undefined && isObject(s)) ? null : 'servers is an object of server objects')}
              data-testid="settings-servers"
              aria-label="Servers (JSON)"
            />
          </Row>
        </Section>
        <Section title="Defaults for steps">
          <Row label="On error" pointer="/on_error" htmlFor={`${id}-onerror`}>
            <Select
              id={`${id}-onerror`}
              data-testid="settings-on-error"
              value={doc.on_error ?? ''}
              options={[
                { value: '', label: 'default (abort)' },
                { value: 'abort', label: 'abort' },
                { value: 'continue', label: 'continue' },
              ]}
              onChange={(v) => set({ on_error: v || undefined })}
            />
          </Row>
          <div className="insp-row" data-pointer="/retry">
            <span className="insp-label">Retry (tool, resource and prompt steps)</span>
            <RetryEditor value={doc.retry} pointer="/retry" idPrefix={`${id}-retry`} onCommit={(retry) => set({ retry })} />
          </div>
        </Section>
        <Section title="Limits">
          <div className="insp-grid" data-pointer="/limits">
            <Row label="Max step runs" pointer="/limits/max_step_runs" htmlFor={`${id}-msr`}>
              <NumberInput id={`${id}-msr`} data-testid="settings-max-step-runs" value={limits.max_step_runs} min={1} placeholder="1000000" onCommit={(n) => setLimit('max_step_runs', n)} />
            </Row>
            <Row label="Timeout (ms)" pointer="/limits/timeout_ms" htmlFor={`${id}-to`}>
              <NumberInput id={`${id}-to`} data-testid="settings-timeout" value={limits.timeout_ms} min={1} placeholder="300000" onCommit={(n) => setLimit('timeout_ms', n)} />
            </Row>
            <Row label="Concurrency" pointer="/limits/concurrency" htmlFor={`${id}-conc`}>
              <NumberInput id={`${id}-conc`} data-testid="settings-concurrency" value={limits.concurrency} min={1} placeholder="16" onCommit={(n) => setLimit('concurrency', n)} />
            </Row>
          </div>
        </Section>
        <Section title="Running">
          <ScheduleEditor value={doc.schedule} set={(schedule) => set({ schedule })} />
          <Row label="Expose" pointer="/expose">
            <Check data-testid="settings-expose" checked={doc.expose === true} onChange={(on) => set({ expose: on ? true : undefined })} label="Serve as an MCP tool of its own (name = id, inputs = its schema)" />
          </Row>
          <Row label="Output" pointer="/output" hint="The run’s result; default: the output of the last step.">
            <TemplateOrJson value={doc.output} onCommit={(output) => set({ output })} names={outputNames} data-testid="settings-output" />
          </Row>
        </Section>
      </div>
    </FieldDiagnostics.Provider>
  );
}
