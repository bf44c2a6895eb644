//! The kind-specific parts of the step form (DESIGN §2 "Kinds").

import { useId, useMemo, useState } from 'react';
import {
  containerSteps,
  listRoles,
  locateStep,
  type Blueprint,
  type Json,
  type JsonObject,
  type LoopStep,
  type PromptStep,
  type ResourceStep,
  type StepPatch,
  type SwitchCase,
  type SwitchStep,
  type ToolStep,
  type TransformStep,
  type WaitStep,
  type WorkflowStep,
} from '../../doc';
import { ArgsForm, argsErrors } from './ArgsForm';
import { JsonField } from './CodeEditor';
import { NumberInput, Row, Select, TextInput } from './fields';
import { findPrompt, findTool, inputSchemaOf, isDestructive, knownServers, useOffers, type Offer } from './offers';
import { namesInScope } from './scope';
import { TemplateField } from './TemplateInput';
import { TemplateOrJson } from './TemplateOrJson';
import { FixedOrExpression } from './FixedOrExpression';
import type { JsonType } from './typed';
import type { Diagnostic } from '../../doc';
import './cases.css';

export interface KindProps<S> {
  step: S;
  doc: Blueprint;
  patch(p: StepPatch): void;
  /** This step's diagnostics with their field pointers. */
  diags: readonly { field: string; d: Diagnostic }[];
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LIST: readonly JsonType[] = ['array'];

function ServerRow({ value, doc, onChange, pointer = '/server', optional }: { value: string | undefined; doc: Blueprint; onChange(v: string | undefined): void; pointer?: string; optional?: boolean }) {
  const offers = useOffers();
  const id = useId();
  const servers = knownServers(offers, doc.servers, value);
  const broken = offers.find((o) => o.server === value)?.error;
  return (
    <Row label="Server" pointer={pointer} htmlFor={id} hint={broken ? `${broken.code}: ${broken.message}` : undefined}>
      <Select
        id={id}
        data-testid="step-server"
        value={value ?? ''}
        options={[{ value: '', label: optional ? '(any: route by name)' : '(choose a server)' }, ...servers.map((s) => ({ value: s, label: s }))]}
        onChange={(v) => onChange(v || undefined)}
      />
    </Row>
  );
}

function serverOffer(offers: readonly Offer[], server: string | undefined): Offer[] {
  return server ? offers.filter((o) => o.server === server) : [...offers];
}

// ---------------------------------------------------------------------------------

export function ToolFields({ step, doc, patch, diags }: KindProps<ToolStep>) {
  const offers = useOffers();
  const toolId = useId();
  const listId = useId();
  const tool = findTool(offers, step.server, step.tool);
  const schema = inputSchemaOf(tool);
  const args = step.args;
  const argsIsObject = args === undefined || (!!args && typeof args === 'object' && !Array.isArray(args));
  const [asJson, setAsJson] = useState(false);
  const useForm = !!schema && argsIsObject && !asJson;
  const extraErrors = useMemo(() => argsErrors(diags), [diags]);
  const tools = serverOffer(offers, step.server).flatMap((o) => o.tools ?? []);
  return (
    <>
      {isDestructive(tool) || step.confirm !== undefined ? <ConfirmNotice step={step} patch={patch} /> : null}
      <ServerRow value={step.server} doc={doc} optional onChange={(server) => patch({ server })} />
      <Row label="Tool" pointer="/tool" htmlFor={toolId} hint={tool?.description ?? undefined}>
        <TextInput id={toolId} data-testid="step-tool" value={step.tool} keepEmpty list={listId} onCommit={(t) => patch({ tool: t ?? '' })} />
        <datalist id={listId}>
          {tools.map((t) => (
            <option key={`${t.server}/${t.name}`} value={t.name}>
              {step.server ? t.description ?? '' : `${t.server}${t.description ? ' — ' + t.description : ''}`}
            </option>
          ))}
        </datalist>
      </Row>
      <div className="insp-row insp-args" data-pointer="/args">
        <div className="insp-label-bar">
          <span className="insp-label">Arguments</span>
          {schema && argsIsObject ? (
            <button type="button" className={`mini-toggle${asJson ? ' is-on' : ''}`} aria-pressed={asJson} onClick={() => setAsJson(!asJson)}>
              JSON
            </button>
          ) : null}
        </div>
        {useForm ? (
          <ArgsForm key={`${step.id}|${step.server ?? ''}|${step.tool}`} stepId={step.id} schema={schema!} args={args} extraErrors={extraErrors} />
        ) : (
          <>
            {!schema ? (
              <div className="insp-hint">
                {tool ? 'This tool has no usable input schema.' : 'No input schema known for this tool (is its server connected?).'} Edit the
                arguments as JSON; strings may hold templates.
              </div>
            ) : !argsIsObject ? (
              <div className="insp-hint">The arguments are not an object; edit them as JSON.</div>
            ) : null}
            <JsonField value={args} onCommit={(v) => patch({ args: v })} data-testid="args-json" aria-label="Arguments (JSON)" />
          </>
        )}
      </div>
    </>
  );
}

/**
 * A tool that says it may destroy data (`destructiveHint`): offers `"confirm":
 * "destructive"`, so a run asks a person to approve each call first (with its arguments).
 */
function ConfirmNotice({ step, patch }: { step: ToolStep; patch(p: StepPatch): void }) {
  const on = step.confirm === 'destructive';
  return (
    <div className={`insp-confirm${on ? ' is-on' : ''}`} data-testid="confirm-notice" data-pointer="/confirm">
      {on ? (
        <>
          <span>Asks a person to approve each call first.</span>
          <button type="button" className="mini-button" data-testid="confirm-off" onClick={() => patch({ confirm: undefined })}>
            Don’t ask
          </button>
        </>
      ) : (
        <>
          <span>This tool may destroy data (it says so: destructiveHint).</span>
          <button type="button" className="mini-button" data-testid="confirm-on" title='Sets "confirm": "destructive": a run waits for your approval before each call' onClick={() => patch({ confirm: 'destructive' })}>
            Ask before calling
          </button>
        </>
      )}
    </div>
  );
}

// ---------------------------------------------------------------------------------

export function ResourceFields({ step, doc, patch }: KindProps<ResourceStep>) {
  const offers = useOffers();
  const id = useId();
  const listId = useId();
  const resources = serverOffer(offers, step.server).flatMap((o) => o.resources ?? []);
  return (
    <>
      <ServerRow value={step.server} doc={doc} onChange={(server) => patch({ server })} />
      <Row label="URI" pointer="/uri" htmlFor={id}>
        <TemplateField id={id} data-testid="step-uri" value={step.uri} list={listId} onCommit={(t) => patch({ uri: t ?? '' })} placeholder="file:///… or {{ … }}" />
        <datalist id={listId}>
          {resources.map((r) => (
            <option key={`${r.server}/${r.uri}`} value={r.uri}>
              {r.name}
            </option>
          ))}
        </datalist>
      </Row>
    </>
  );
}

// ---------------------------------------------------------------------------------

export function PromptFields({ step, doc, patch }: KindProps<PromptStep>) {
  const offers = useOffers();
  const id = useId();
  const listId = useId();
  const prompt = findPrompt(offers, step.server, step.prompt);
  const prompts = serverOffer(offers, step.server).flatMap((o) => o.prompts ?? []);
  const args: JsonObject = step.args && typeof step.args === 'object' && !Array.isArray(step.args) ? (step.args as JsonObject) : {};
  const argsIsObject = step.args === undefined || step.args === args;
  const [newKey, setNewKey] = useState('');
  const setArg = (key: string, v: Json | undefined) => {
    const next: JsonObject = { ...args };
    if (v === undefined) delete next[key];
    else next[key] = v;
    patch({ args: Object.keys(next).length ? next : undefined });
  };
  const known = prompt?.arguments ?? [];
  const extra = Object.keys(args).filter((k) => !known.some((a) => a.name === k));
  const shown = (v: Json | undefined) => (v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v));
  return (
    <>
      <ServerRow value={step.server} doc={doc} onChange={(server) => patch({ server })} />
      <Row label="Prompt" pointer="/prompt" htmlFor={id} hint={prompt?.description ?? undefined}>
        <TextInput id={id} data-testid="step-prompt" value={step.prompt} keepEmpty list={listId} onCommit={(t) => patch({ prompt: t ?? '' })} />
        <datalist id={listId}>
          {prompts.map((p) => (
            <option key={`${p.server}/${p.name}`} value={p.name}>
              {p.description ?? ''}
            </option>
          ))}
        </datalist>
      </Row>
      {argsIsObject ? (
        <div className="insp-row" data-pointer="/args">
          <span className="insp-label">Arguments</span>
          {known.map((a) => (
            <Row key={a.name} label={<>{a.name}{a.required ? <span className="required">*</span> : null}</>} pointer={`/args/${a.name}`} htmlFor={`${id}-arg-${a.name}`} hint={a.description ?? undefined}>
              <TemplateField id={`${id}-arg-${a.name}`} value={shown(args[a.name])} onCommit={(t) => setArg(a.name, t)} />
            </Row>
          ))}
          {extra.map((k) => (
            <Row key={k} label={k} pointer={`/args/${k}`} htmlFor={`${id}-arg-${k}`}>
              <div className="insp-inline">
                <TemplateField id={`${id}-arg-${k}`} value={shown(args[k])} onCommit={(t) => setArg(k, t ?? '')} />
                <button type="button" className="mini-button" title={`Remove ${k}`} onClick={() => setArg(k, undefined)}>
                  ✕
                </button>
              </div>
            </Row>
          ))}
          <div className="insp-inline">
            <input
              type="text"
              placeholder="argument name"
              value={newKey}
              aria-label="New argument name"
              onChange={(e) => setNewKey(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && newKey.trim() && !(newKey.trim() in args)) {
                  e.preventDefault();
                  setArg(newKey.trim(), '');
                  setNewKey('');
                }
              }}
            />
            <button
              type="button"
              className="mini-button"
              disabled={!newKey.trim() || newKey.trim() in args}
              onClick={() => {
                setArg(newKey.trim(), '');
                setNewKey('');
              }}
            >
              Add
            </button>
          </div>
        </div>
      ) : (
        <Row label="Arguments" pointer="/args">
          <JsonField value={step.args} onCommit={(v) => patch({ args: v })} data-testid="args-json" />
        </Row>
      )}
    </>
  );
}

// ---------------------------------------------------------------------------------

export function TransformFields({ step, patch }: KindProps<TransformStep>) {
  return (
    <Row label="Value" pointer="/value" hint="Any JSON; strings may hold {{ templates }}. A string that is exactly one template keeps the value’s type.">
      <JsonField value={step.value} onCommit={(v) => patch({ value: v })} data-testid="step-value" aria-label="Value (JSON)" />
    </Row>
  );
}

// ---------------------------------------------------------------------------------

function Targets({ value, candidates, onChange, label }: { value: readonly string[]; candidates: readonly string[]; onChange(next: string[]): void; label: string }) {
  const free = candidates.filter((c) => !value.includes(c));
  return (
    <div className="targets">
      {value.map((t) => (
        <span key={t} className="chip">
          <code>{t}</code>
          <button type="button" className="chip-x" title={`Remove ${t}`} aria-label={`Remove ${t} from ${label}`} onClick={() => onChange(value.filter((x) => x !== t))}>
            ✕
          </button>
        </span>
      ))}
      {free.length ? (
        <select aria-label={`Add a step to ${label}`} value="" onChange={(e) => e.target.value && onChange([...value, e.target.value])}>
          <option value="">+ step…</option>
          {free.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      ) : null}
    </div>
  );
}

export function SwitchFields({ step, doc, patch }: KindProps<SwitchStep>) {
  const cases: SwitchCase[] = Array.isArray(step.cases) ? step.cases : [];
  const loc = locateStep(doc, step.id);
  const list = loc ? (containerSteps(doc, loc.container) ?? []) : [];
  const roles = listRoles(list);
  const candidates = list.filter((s) => s.id !== step.id && !roles.fallbackOf.has(s.id)).map((s) => s.id);
  const setCase = (i: number, c: SwitchCase | null) => {
    const next = cases.slice();
    if (c) next[i] = c;
    else next.splice(i, 1);
    patch({ cases: next });
  };
  const move = (i: number, d: number) => {
    const j = i + d;
    if (j < 0 || j >= cases.length) return;
    const next = cases.slice();
    [next[i], next[j]] = [next[j]!, next[i]!];
    patch({ cases: next });
  };
  const baseId = useId();
  return (
    <>
      <div className="insp-row" data-pointer="/cases">
        <div className="insp-label-bar">
          <span className="insp-label">Cases</span>
          <button type="button" className="mini-button" data-testid="switch-add-case" onClick={() => patch({ cases: [...cases, { when: '', to: [] }] })}>
            + case
          </button>
        </div>
        <div className="insp-hint">The first case whose `when` is truthy runs its steps; the others are skipped.</div>
        {cases.map((c, i) => (
          <div key={i} className="insp-case" data-pointer={`/cases/${i}`} data-testid={`switch-case-${i}`}>
            <div className="insp-case-head">
              <span className="insp-sublabel">case {i}</span>
              <span className="insp-case-actions">
                <button type="button" className="mini-button" title="Move up" aria-label={`Move case ${i} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                  ↑
                </button>
                <button type="button" className="mini-button" title="Move down" aria-label={`Move case ${i} down`} disabled={i === cases.length - 1} onClick={() => move(i, 1)}>
                  ↓
                </button>
                <button type="button" className="mini-button" title="Remove this case" aria-label={`Remove case ${i}`} onClick={() => setCase(i, null)}>
                  ✕
                </button>
              </span>
            </div>
            <Row label="when" pointer={`/cases/${i}/when`} htmlFor={`${baseId}-when-${i}`} className="insp-case-when">
              <TemplateField id={`${baseId}-when-${i}`} value={c?.when} placeholder="{{ expression }}" onCommit={(t) => setCase(i, { ...c, when: t ?? '' })} />
            </Row>
            <Row label="to" pointer={`/cases/${i}/to`} className="insp-case-to">
              <Targets label={`case ${i}`} value={Array.isArray(c?.to) ? c.to : []} candidates={candidates} onChange={(to) => setCase(i, { ...c, to })} />
            </Row>
          </div>
        ))}
      </div>
      <Row label="Default" pointer="/default" hint="Runs when no case matches.">
        <Targets label="default" value={Array.isArray(step.default) ? step.default : []} candidates={candidates} onChange={(d) => patch({ default: d.length ? d : undefined })} />
      </Row>
    </>
  );
}

// ---------------------------------------------------------------------------------

export function LoopFields({ step, doc, patch }: KindProps<LoopStep>) {
  const baseId = useId();
  const [mode, setMode] = useState<'for_each' | 'until'>(step.until !== undefined && step.for_each === undefined ? 'until' : 'for_each');
  const untilNames = useMemo(() => namesInScope(doc, step.id, { field: '/until' }), [doc, step.id]);
  const collectNames = useMemo(() => namesInScope(doc, step.id, { field: '/collect' }), [doc, step.id]);
  const body = Array.isArray(step.steps) ? step.steps.length : 0;
  return (
    <>
      <div className="insp-row" data-pointer={mode === 'until' ? '/until' : '/for_each'}>
        <div className="insp-segmented" role="radiogroup" aria-label="Loop form">
          {(['for_each', 'until'] as const).map((m) => (
            <label key={m} className={mode === m ? 'is-on' : ''}>
              <input type="radio" name={`${baseId}-mode`} checked={mode === m} onChange={() => setMode(m)} />
              {m === 'for_each' ? 'for each' : 'until'}
            </label>
          ))}
        </div>
        {mode === 'for_each' ? (
          <Row label="for_each" pointer="/for_each" htmlFor={`${baseId}-fe`} hint="Fixed: the list itself, as JSON. Expression: a template giving the list.">
            <FixedOrExpression
              id={`${baseId}-fe`}
              data-testid="loop-for-each"
              value={step.for_each}
              wants={LIST}
              fixedPlaceholder='["ada", "grace", "linus"]'
              expressionPlaceholder="{{ inputs.items }}"
              onCommit={(v) => patch({ for_each: v as LoopStep['for_each'], ...(v !== undefined ? { until: undefined } : {}) })}
            />
          </Row>
        ) : (
          <Row label="until" pointer="/until" htmlFor={`${baseId}-until`} hint="Evaluated after each iteration, with its body outputs and `index` in scope.">
            <TemplateField
              id={`${baseId}-until`}
              data-testid="loop-until"
              value={step.until}
              names={untilNames}
              placeholder="{{ poll.done }}"
              onCommit={(t) => patch({ until: t, ...(t !== undefined ? { for_each: undefined } : {}) })}
            />
          </Row>
        )}
      </div>
      <Row label="as" pointer="/as" htmlFor={`${baseId}-as`} hint="The loop variable’s name (default item).">
        <TextInput
          id={`${baseId}-as`}
          value={step.as}
          placeholder="item"
          validate={(t) => (t === '' || IDENT.test(t) ? null : 'letters, digits and _, not starting with a digit')}
          onCommit={(t) => patch({ as: t })}
        />
      </Row>
      <div className="insp-grid">
        <Row label="Concurrency" pointer="/concurrency" htmlFor={`${baseId}-conc`}>
          <NumberInput id={`${baseId}-conc`} value={step.concurrency} min={1} placeholder="1" onCommit={(n) => patch({ concurrency: n })} />
        </Row>
        <Row label="Max iterations" pointer="/max_iterations" htmlFor={`${baseId}-max`}>
          <NumberInput id={`${baseId}-max`} value={step.max_iterations} min={1} placeholder={step.until !== undefined ? '1000' : 'the list'} onCommit={(n) => patch({ max_iterations: n })} />
        </Row>
        <Row label="Delay (ms)" pointer="/delay_ms" htmlFor={`${baseId}-delay`}>
          <NumberInput id={`${baseId}-delay`} value={step.delay_ms} placeholder="0" onCommit={(n) => patch({ delay_ms: n })} />
        </Row>
      </div>
      <Row label="collect" pointer="/collect" hint="Per iteration; default: the body’s last step output.">
        <TemplateOrJson value={step.collect} names={collectNames} onCommit={(v) => patch({ collect: v })} data-testid="loop-collect" />
      </Row>
      <div className="insp-hint">
        The body ({body} step{body === 1 ? '' : 's'}) is edited on the canvas: drop steps into the loop.
      </div>
    </>
  );
}

// ---------------------------------------------------------------------------------

export function WorkflowFields({ step, patch }: KindProps<WorkflowStep>) {
  const id = useId();
  return (
    <>
      <Row label="Workflow" pointer="/workflow" htmlFor={id} hint="The id of a stored blueprint.">
        <TextInput id={id} data-testid="step-workflow" value={step.workflow} keepEmpty onCommit={(t) => patch({ workflow: t ?? '' })} />
      </Row>
      <Row label="Arguments (its inputs)" pointer="/args">
        <JsonField value={step.args} onCommit={(v) => patch({ args: v })} data-testid="args-json" aria-label="Arguments (JSON)" />
      </Row>
    </>
  );
}

export function WaitFields({ step, patch }: KindProps<WaitStep>) {
  const id = useId();
  return (
    <Row label="Wait (ms)" pointer="/ms" htmlFor={id}>
      <NumberInput id={id} data-testid="step-ms" value={step.ms} onCommit={(n) => patch({ ms: n ?? 0 })} />
    </Row>
  );
}
