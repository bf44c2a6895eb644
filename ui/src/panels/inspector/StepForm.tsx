//! The form of one step: id, name, the kind's fields, then the common fields (after,
//! timeout, retry, on_error, fallback, save, note). Every committed change is one
//! `patchStep` (renames through `renameStep`, fallbacks through `setFallback`).

import { useId, useMemo, useState, type ReactNode } from 'react';
import {
  allStepIds,
  checkStepId,
  connectionProblem,
  containerSteps,
  docStore,
  locateStep,
  stepDeps,
  subtreeIds,
  useDoc,
  type Blueprint,
  type Diagnostic,
  type EditResult,
  type InputStep,
  type LoopStep,
  type PromptStep,
  type ResourceStep,
  type Step,
  type StepPatch,
  type SwitchStep,
  type ToolStep,
  type TransformStep,
  type WaitStep,
  type WorkflowStep,
} from '../../doc';
import { NumberInput, RetryEditor, Row, Section, Select, TextInput } from './fields';
import { InputFields } from './InputFields';
import { LoopFields, PromptFields, ResourceFields, SwitchFields, ToolFields, TransformFields, WaitFields, WorkflowFields, type KindProps } from './kinds';

function AfterRow({ doc, step, patch }: { doc: Blueprint; step: Step; patch(p: StepPatch): void }) {
  const loc = locateStep(doc, step.id);
  const list = loc ? (containerSteps(doc, loc.container) ?? []) : [];
  const deps = loc ? stepDeps(list, loc.index) : null;
  let body: ReactNode;
  if (!deps) body = null;
  else if (deps.fallbackOf) body = <span>runs only as the fallback of <code>{deps.fallbackOf}</code></span>;
  else if (deps.explicit) {
    body = (
      <>
        {deps.after.length ? (
          <span className="targets">
            {deps.after.map((a) => (
              <span key={a} className="chip">
                <code>{a}</code>
              </span>
            ))}
          </span>
        ) : (
          <span>starts at once (<code>after: []</code>)</span>
        )}
        <button type="button" className="mini-button" data-testid="after-clear" title="Remove `after`: run after the previous step of the list" onClick={() => patch({ after: undefined })}>
          Clear to implicit
        </button>
      </>
    );
  } else if (deps.after.length) body = <span>implicit: after <code>{deps.after[0]}</code></span>;
  else if (deps.switchFrom) body = <span>—</span>;
  else body = <span>implicit: starts at once (first of its list)</span>;
  return (
    <Row label="Runs after" pointer="/after" hint="Connect nodes on the canvas to change dependencies.">
      <div className="insp-inline insp-after" data-testid="step-after">
        {body}
        {deps?.switchFrom ? (
          <span>
            routed by <code>{deps.switchFrom.switch}</code> ({deps.switchFrom.handle})
          </span>
        ) : null}
      </div>
    </Row>
  );
}

function FallbackRow({ doc, step, onResult }: { doc: Blueprint; step: Step; onResult(r: EditResult): void }) {
  const id = useId();
  const loc = locateStep(doc, step.id);
  const list = loc ? (containerSteps(doc, loc.container) ?? []) : [];
  const candidates = list
    .filter((s) => s.id !== step.id && (s.id === step.fallback || connectionProblem(doc, step.id, s.id, 'fallback') === null))
    .map((s) => s.id);
  return (
    <Row label="Fallback" pointer="/fallback" htmlFor={id} hint="Runs with `error` in scope when this step fails after its retries; its output stands in.">
      <Select
        id={id}
        data-testid="step-fallback"
        value={step.fallback ?? ''}
        options={[{ value: '', label: '(none)' }, ...candidates.map((c) => ({ value: c, label: c }))]}
        onChange={(v) => onResult(docStore.getState().setFallback(step.id, v || null))}
      />
    </Row>
  );
}

export interface StepFormProps {
  step: Step;
  /** This step's diagnostics with the field (pointer inside the step) each is about. */
  diags: readonly { field: string; d: Diagnostic }[];
}

export function StepForm({ step, diags }: StepFormProps) {
  const doc = useDoc((s) => s.doc);
  const [notice, setNotice] = useState<string | null>(null);
  const ids = useId();
  const onResult = (r: EditResult) => setNotice(r.ok ? null : r.reason);
  const patch = (p: StepPatch) => onResult(docStore.getState().patchStep(step.id, p));
  const taken = useMemo(() => {
    const all = new Set(allStepIds(doc));
    all.delete(step.id);
    return all;
  }, [doc, step.id]);
  const retryApplies = step.kind === 'tool' || step.kind === 'resource' || step.kind === 'prompt';
  const kindProps = { doc, patch, diags } as const;

  let fields: ReactNode = null;
  switch (step.kind) {
    case 'tool':
      fields = <ToolFields step={step as ToolStep} {...kindProps} />;
      break;
    case 'resource':
      fields = <ResourceFields step={step as ResourceStep} {...kindProps} />;
      break;
    case 'prompt':
      fields = <PromptFields step={step as PromptStep} {...kindProps} />;
      break;
    case 'transform':
      fields = <TransformFields step={step as TransformStep} {...kindProps} />;
      break;
    case 'switch':
      fields = <SwitchFields step={step as SwitchStep} {...kindProps} />;
      break;
    case 'loop':
      fields = <LoopFields step={step as LoopStep} {...(kindProps as Omit<KindProps<LoopStep>, 'step'>)} />;
      break;
    case 'workflow':
      fields = <WorkflowFields step={step as WorkflowStep} {...kindProps} />;
      break;
    case 'wait':
      fields = <WaitFields step={step as WaitStep} {...kindProps} />;
      break;
    case 'input':
      fields = <InputFields step={step as InputStep} {...kindProps} />;
      break;
    default:
      fields = <div className="insp-hint">Unknown kind `{String((step as { kind?: unknown }).kind)}`: edit it in the Raw JSON tab.</div>;
  }

  return (
    <div className="step-form" data-testid="step-form">
      {notice ? (
        <div className="insp-notice" role="alert" data-testid="inspector-notice">
          {notice}
          <button type="button" className="mini-button" onClick={() => setNotice(null)} aria-label="Dismiss">
            ✕
          </button>
        </div>
      ) : null}
      <Row label="Id" pointer="/id" htmlFor={`${ids}-id`} hint={step.kind === 'loop' && (step as LoopStep).steps?.length ? `${subtreeIds(step).length - 1} body steps keep their ids.` : undefined}>
        <TextInput
          id={`${ids}-id`}
          data-testid="step-id-input"
          value={step.id}
          keepEmpty
          validate={(t) => (t === step.id ? null : checkStepId(t, taken))}
          onCommit={(t) => {
            if (t && t !== step.id) onResult(docStore.getState().renameStep(step.id, t));
          }}
        />
      </Row>
      <Row label="Name" pointer="/name" htmlFor={`${ids}-name`}>
        <TextInput id={`${ids}-name`} data-testid="step-name-input" value={step.name} onCommit={(t) => patch({ name: t })} placeholder="shown on the node" />
      </Row>
      <Section title={step.kind}>{fields}</Section>
      <Section title="Flow and errors">
        <AfterRow doc={doc} step={step} patch={patch} />
        <FallbackRow doc={doc} step={step} onResult={onResult} />
        <div className="insp-grid">
          <Row label="Timeout (ms)" pointer="/timeout_ms" htmlFor={`${ids}-timeout`}>
            <NumberInput id={`${ids}-timeout`} data-testid="step-timeout" value={step.timeout_ms} min={1} onCommit={(n) => patch({ timeout_ms: n })} />
          </Row>
          <Row label="On error" pointer="/on_error" htmlFor={`${ids}-onerror`}>
            <Select
              id={`${ids}-onerror`}
              data-testid="step-on-error"
              value={step.on_error ?? ''}
              options={[
                { value: '', label: `default (${doc.on_error ?? 'abort'})` },
                { value: 'abort', label: 'abort' },
                { value: 'continue', label: 'continue' },
              ]}
              onChange={(v) => patch({ on_error: v || undefined })}
            />
          </Row>
        </div>
        <div className="insp-row" data-pointer="/retry">
          <span className="insp-label">Retry{retryApplies ? '' : ' (tool, resource and prompt steps retry)'}</span>
          <RetryEditor value={step.retry} pointer="/retry" idPrefix={`${ids}-retry`} onCommit={(retry) => patch({ retry })} />
        </div>
        <Row label="Save as" pointer="/save" htmlFor={`${ids}-save`} hint="Keeps the output as saved.<name> for later runs.">
          <TextInput id={`${ids}-save`} data-testid="step-save" value={step.save} onCommit={(t) => patch({ save: t })} placeholder="cursor" />
        </Row>
        <Row label="Note" pointer="/note" htmlFor={`${ids}-note`}>
          <TextInput id={`${ids}-note`} data-testid="step-note" value={step.note} multiline onCommit={(t) => patch({ note: t })} />
        </Row>
      </Section>
    </div>
  );
}
