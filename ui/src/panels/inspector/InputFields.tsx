//! The `input` step's part of the step form: what to ask (a template, with completion),
//! what answer it takes — a small schema editor (text, number, whole number, yes/no, one
//! of a list, or the schema as raw JSON for a form of several fields) —, the answer
//! offered (`default`), how long to wait (`timeout_ms`, `on_timeout`), and the approval
//! gate switch (`approve`: Approve / Reject instead of a form). Every change is one
//! `patchStep` (one undo entry).

import { useId } from 'react';
import type { InputStep, Json, JsonObject, StepPatch } from '../../doc';
import { JsonField } from './CodeEditor';
import { Check, NumberInput, Row, Select, TextInput } from './fields';
import type { KindProps } from './kinds';
import { TemplateField } from './TemplateInput';

/** How the schema editor shows a schema: one of the simple answers, or raw JSON. */
export type SchemaMode = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

const MODES: readonly { value: SchemaMode; label: string }[] = [
  { value: 'string', label: 'text' },
  { value: 'number', label: 'number' },
  { value: 'integer', label: 'whole number' },
  { value: 'boolean', label: 'yes / no' },
  { value: 'enum', label: 'one of a list' },
  { value: 'json', label: 'JSON schema (a form of fields)' },
];

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** Keys a simple schema may carry besides its type and still be edited as one. */
const SIMPLE_KEYS = new Set(['type', 'title', 'description', 'enum']);

/** The editor's mode for a schema (absent: text, the format's default). */
export function schemaMode(schema: Json | undefined): SchemaMode {
  if (schema === undefined) return 'string';
  if (!isObject(schema) || Object.keys(schema).some((k) => !SIMPLE_KEYS.has(k))) return 'json';
  if (Array.isArray(schema.enum)) return schema.type === undefined || schema.type === 'string' ? 'enum' : 'json';
  switch (schema.type) {
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
      return schema.type;
    default:
      return 'json';
  }
}

/** The schema after choosing `mode` (title and description kept; an enum starts from its options or two). */
export function schemaFor(mode: SchemaMode, current: Json | undefined): Json {
  const keep: JsonObject = {};
  if (isObject(current)) {
    if (current.title !== undefined) keep.title = current.title;
    if (current.description !== undefined) keep.description = current.description;
  }
  switch (mode) {
    case 'enum': {
      const options = isObject(current) && Array.isArray(current.enum) ? current.enum : ['yes', 'no'];
      return { type: 'string', enum: options, ...keep };
    }
    case 'json':
      return isObject(current)
        ? current
        : { type: 'object', properties: { value: { type: 'string', title: 'Value' } }, required: ['value'] };
    default:
      return { type: mode, ...keep };
  }
}

/** Enum options as one line of text (comma separated) and back. */
export function optionsText(schema: Json | undefined): string {
  return isObject(schema) && Array.isArray(schema.enum) ? schema.enum.map((o) => (typeof o === 'string' ? o : JSON.stringify(o))).join(', ') : '';
}
export function parseOptions(text: string): string[] {
  return [...new Set(text.split(',').map((o) => o.trim()).filter(Boolean))];
}

/** The answer offered, edited as the schema's type asks (a template where a string may go). */
function DefaultField({ mode, schema, value, onCommit, id }: { mode: SchemaMode; schema: Json | undefined; value: Json | undefined; onCommit(v: Json | undefined): void; id: string }) {
  const asText = value === undefined ? undefined : typeof value === 'string' ? value : JSON.stringify(value);
  switch (mode) {
    case 'string':
      return <TemplateField id={id} data-testid="input-default" value={asText} placeholder="(none)" onCommit={(t) => onCommit(t)} />;
    case 'number':
    case 'integer':
      return (
        <TextInput
          id={id}
          data-testid="input-default"
          value={asText}
          placeholder="(none)"
          validate={(t) => {
            if (t.trim() === '' || t.includes('{{')) return null;
            const n = Number(t);
            if (!Number.isFinite(n)) return 'a number, or a {{ template }}';
            return mode === 'integer' && !Number.isInteger(n) ? 'a whole number' : null;
          }}
          onCommit={(t) => onCommit(t === undefined ? undefined : t.includes('{{') ? t : Number(t))}
        />
      );
    case 'boolean':
      return (
        <Select
          id={id}
          data-testid="input-default"
          value={value === true ? 'true' : value === false ? 'false' : ''}
          options={[
            { value: '', label: '(none)' },
            { value: 'true', label: 'yes' },
            { value: 'false', label: 'no' },
          ]}
          onChange={(v) => onCommit(v === '' ? undefined : v === 'true')}
        />
      );
    case 'enum': {
      const options = isObject(schema) && Array.isArray(schema.enum) ? schema.enum.map(String) : [];
      return (
        <Select
          id={id}
          data-testid="input-default"
          value={typeof value === 'string' ? value : ''}
          options={[{ value: '', label: '(none)' }, ...options.map((o) => ({ value: o, label: o }))]}
          onChange={(v) => onCommit(v === '' ? undefined : v)}
        />
      );
    }
    case 'json':
      return <JsonField id={id} value={value} onCommit={onCommit} data-testid="input-default" aria-label="Default (JSON)" />;
  }
}

export function InputFields({ step, patch }: KindProps<InputStep>) {
  const ids = useId();
  const approve = step.approve === true;
  const mode = schemaMode(step.schema);
  // `default` is a switch's field too (a list of steps): patched here through a cast.
  const setDefault = (v: Json | undefined) => patch({ default: v } as unknown as StepPatch);
  return (
    <>
      <Row label="Ask" pointer="/prompt" htmlFor={`${ids}-prompt`} hint="What the person reads; may hold {{ templates }} over inputs and earlier outputs.">
        <TemplateField id={`${ids}-prompt`} data-testid="input-prompt" value={step.prompt} placeholder="What value?" onCommit={(t) => patch({ prompt: t ?? '' })} />
      </Row>
      <div className="insp-row" data-pointer="/approve">
        <Check
          id={`${ids}-approve`}
          data-testid="input-approve"
          checked={approve}
          label="Approval gate: Approve / Reject instead of a form"
          onChange={(on) =>
            patch(
              on
                ? ({ approve: true, schema: undefined, default: undefined } as unknown as StepPatch)
                : { approve: undefined },
            )
          }
        />
        <div className="insp-hint">
          {approve
            ? 'Approved, the step gives true and the steps after it run; rejected, it fails with INPUT_REJECTED (its on_error and fallback apply).'
            : 'The step’s output is the answer.'}
        </div>
      </div>
      {approve ? null : (
        <>
          <Row label="Answer" pointer="/schema" htmlFor={`${ids}-mode`}>
            <Select
              id={`${ids}-mode`}
              data-testid="input-schema-mode"
              value={mode}
              options={MODES}
              onChange={(m) => m && patch({ schema: schemaFor(m, step.schema) })}
            />
          </Row>
          {mode === 'enum' ? (
            <Row label="Options" pointer="/schema/enum" htmlFor={`${ids}-options`} hint="Comma separated.">
              <TextInput
                id={`${ids}-options`}
                data-testid="input-options"
                value={optionsText(step.schema)}
                validate={(t) => (parseOptions(t).length ? null : 'at least one option')}
                onCommit={(t) => patch({ schema: { ...(step.schema as JsonObject), enum: parseOptions(t ?? '') } })}
              />
            </Row>
          ) : null}
          {mode === 'json' ? (
            <Row
              label="Schema (JSON)"
              pointer="/schema"
              hint='A primitive, or an object of flat fields: {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}.'
            >
              <JsonField value={step.schema} onCommit={(v) => patch({ schema: v })} data-testid="input-schema-json" aria-label="Schema (JSON)" />
            </Row>
          ) : null}
          <Row label="Default" pointer="/default" htmlFor={`${ids}-default`} hint="Pre-filled in the form; taken when the time runs out with “use the default”.">
            <DefaultField mode={mode} schema={step.schema} value={step.default} onCommit={setDefault} id={`${ids}-default`} />
          </Row>
        </>
      )}
      <div className="insp-grid">
        <Row label="Answer within (ms)" pointer="/timeout_ms" htmlFor={`${ids}-timeout`}>
          <NumberInput id={`${ids}-timeout`} data-testid="input-timeout" value={step.timeout_ms} min={1} placeholder="no limit" onCommit={(n) => patch({ timeout_ms: n })} />
        </Row>
        <Row label="Then" pointer="/on_timeout" htmlFor={`${ids}-on-timeout`}>
          <Select
            id={`${ids}-on-timeout`}
            data-testid="input-on-timeout"
            value={step.on_timeout ?? ''}
            options={[
              { value: '', label: 'fail (INPUT_TIMEOUT)' },
              { value: 'fail', label: 'fail (INPUT_TIMEOUT), written out' },
              { value: 'default', label: 'use the default' },
            ]}
            onChange={(v) => patch({ on_timeout: v || undefined })}
          />
        </Row>
      </div>
    </>
  );
}
