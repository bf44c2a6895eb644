//! The inspector (right sidebar): blueprint settings when nothing is selected, the
//! step's form (or its raw JSON) for one step, and "N steps selected" for several.
//! Selecting another step scrolls back to the top, where its run section is; an
//! argument error of the shown run marks its field in the form (see `StepRun`).

import { useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { diagnosticTarget, docStore, findStep, READ_ONLY, useDoc, type Diagnostic, type Step } from '../../doc';
import { StepRun, useArgumentProblem } from '../run/StepRun';
import { FieldDiagnostics } from './fields';
import { OffersOverride, useOffers, type Offer } from './offers';
import { usePreviewScope } from './last-run';
import { outputFieldsOf } from './output-fields';
import { PreviewScope } from './TemplatePreview';
import { RawJson } from './RawJson';
import { namesInScope } from './scope';
import { Settings } from './Settings';
import { StepForm } from './StepForm';
import { ScopeNames } from './TemplateInput';
import { problemsOf } from '../../diagnostics/hints';

const FOCUSABLE = 'input:not([type=hidden]), select, textarea, [contenteditable="true"], button';

/** Scrolls to, focuses and briefly highlights the field at `pointer` (or its nearest parent). */
export function focusField(root: HTMLElement, pointer: string): boolean {
  const tokens = pointer.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  const rows = [...root.querySelectorAll<HTMLElement>('[data-pointer]')];
  for (let n = tokens.length; n >= 1; n--) {
    const p = '/' + tokens.slice(0, n).map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    let el: HTMLElement | null = null;
    if (tokens[0] === 'args' && n >= 2) {
      // RJSF ids: root_<prop>_<sub>…
      const byId = root.ownerDocument.getElementById(['root', ...tokens.slice(1, n)].join('_'));
      if (byId && root.contains(byId)) el = byId;
    }
    el ??= rows.find((r) => r.getAttribute('data-pointer') === p) ?? null;
    if (!el) continue;
    const row = el.closest<HTMLElement>('.rjsf-field, [data-pointer]') ?? el;
    row.scrollIntoView?.({ block: 'center' });
    const target = el.matches(FOCUSABLE) ? el : el.querySelector<HTMLElement>(FOCUSABLE);
    target?.focus({ preventScroll: true });
    row.classList.remove('is-flagged');
    // Restart the highlight animation.
    void row.offsetWidth;
    row.classList.add('is-flagged');
    setTimeout(() => row.classList.remove('is-flagged'), 2500);
    return true;
  }
  return false;
}

function DiagnosticRows({ items, onPick }: { items: readonly Diagnostic[]; onPick(d: Diagnostic): void }) {
  if (!items.length) return null;
  return (
    <ul className="insp-diags" data-testid="inspector-diagnostics">
      {items.map((d, i) => (
        <li key={i}>
          <button type="button" className={`insp-diag diag-${d.level}`} data-testid="inspector-diagnostic" onClick={() => onPick(d)} title={d.hint ?? undefined}>
            <span className="diag-level">{d.level === 'error' ? '✕' : '!'}</span>
            <code className="diag-code">{d.code}</code>
            <span className="diag-message">{d.message}</span>
            {d.hint ? <span className="diag-hint">{d.hint}</span> : null}
          </button>
        </li>
      ))}
    </ul>
  );
}

const NO_DIAGS: Diagnostic[] = [];

type Tab = 'form' | 'json';

function StepInspector({ step, tab, setTab }: { step: Step; tab: Tab; setTab(t: Tab): void }) {
  const doc = useDoc((s) => s.doc);
  const items = useDoc((s) => s.diagnosticsByStep[step.id]?.items ?? NO_DIAGS);
  const field = useDoc((s) => s.field);
  const reveal = useDoc((s) => s.reveal);
  const root = useRef<HTMLDivElement>(null);

  const offers = useOffers();
  const lastRun = usePreviewScope(step.id);
  const names = useMemo(
    () => namesInScope(doc, step.id, { outputFields: (s) => outputFieldsOf(s, offers, lastRun?.scope) }),
    [doc, step.id, offers, lastRun],
  );
  const problem = useArgumentProblem(step.id);
  const diags = useMemo(() => {
    const out = items.map((d) => ({ field: diagnosticTarget(doc, d).field ?? '', d }));
    // The last run's argument errors, each under the field it is about.
    for (const issue of problem?.issues ?? []) {
      const d: Diagnostic = { level: 'error', code: 'RUN_ARGUMENT', message: `last run: ${issue.message}`, pointer: '', step: step.id };
      out.push({ field: `/args${issue.pointer}`, d });
    }
    return out;
  }, [items, doc, problem, step.id]);
  const byField = useMemo(() => {
    const m = new Map<string, Diagnostic[]>();
    for (const { field: f, d } of diags) if (f) m.set(f, [...(m.get(f) ?? []), d]);
    return m;
  }, [diags]);

  // A diagnostic was clicked: show the form and bring its field into view (once per
  // click: the tab stays free to change afterwards).
  const handled = useRef<string | null>(null);
  useEffect(() => {
    if (!field) return;
    const request = `${field}|${reveal?.nonce ?? ''}`;
    if (handled.current === request) return;
    if (tab !== 'form') {
      setTab('form');
      return;
    }
    handled.current = request;
    if (root.current) focusField(root.current, field);
  }, [field, reveal, tab, setTab]);

  return (
    <div className="step-inspector" ref={root}>
      <header className="insp-head">
        <span className={`kind-badge kind-${step.kind}`}>{step.kind}</span>
        <code className="insp-head-id">{step.id}</code>
        {step.name ? <span className="insp-head-name">{step.name}</span> : null}
      </header>
      <StepRun id={step.id} />
      <DiagnosticRows
        items={items}
        onPick={(d) => {
          setTab('form');
          // Sets `field` and a new `reveal`, so the effect below focuses it even when clicked twice.
          docStore.getState().selectDiagnostic(d);
        }}
      />
      <div className="insp-tabs" role="tablist">
        <button type="button" role="tab" aria-selected={tab === 'form'} className={tab === 'form' ? 'is-on' : ''} data-testid="step-form-tab" onClick={() => setTab('form')}>
          Form
        </button>
        <button type="button" role="tab" aria-selected={tab === 'json'} className={tab === 'json' ? 'is-on' : ''} data-testid="raw-json-tab" onClick={() => setTab('json')}>
          Raw JSON
        </button>
      </div>
      <ReadOnlyFields>
        {tab === 'form' ? (
          <ScopeNames.Provider value={names}>
            <PreviewScope.Provider value={lastRun}>
              <FieldDiagnostics.Provider value={byField}>
                <StepForm step={step} diags={diags} />
              </FieldDiagnostics.Provider>
            </PreviewScope.Provider>
          </ScopeNames.Provider>
        ) : (
          <RawJson step={step} />
        )}
      </ReadOnlyFields>
    </div>
  );
}

/**
 * The fields of the inspector: while a past run's definition is shown, every one is
 * shown and none is editable (the document store refuses edits too), under a line
 * saying why.
 */
function ReadOnlyFields({ children }: { children: ReactNode }) {
  const readOnly = useDoc((s) => s.readOnly);
  return (
    <>
      {readOnly ? (
        <p className="insp-read-only" data-testid="inspector-read-only">
          {READ_ONLY[0]?.toUpperCase()}
          {READ_ONLY.slice(1)}.
        </p>
      ) : null}
      <fieldset className="insp-fields" disabled={readOnly} data-testid="inspector-fields">
        {children}
      </fieldset>
    </>
  );
}

function MultiSelection({ ids }: { ids: readonly string[] }) {
  return (
    <div className="multi-selection" data-testid="multi-selection">
      <p className="insp-multi-count">{ids.length} steps selected</p>
      <ul className="targets">
        {ids.map((id) => (
          <li key={id} className="chip">
            <code>{id}</code>
          </li>
        ))}
      </ul>
      <div className="insp-actions">
        <button type="button" data-testid="inspector-duplicate" onClick={() => docStore.getState().duplicate(ids)}>
          Duplicate
        </button>
        <button type="button" className="danger" data-testid="inspector-delete" onClick={() => docStore.getState().removeSteps(ids)}>
          Delete
        </button>
      </div>
    </div>
  );
}

export interface InspectorProps {
  /**
   * What the servers offer (tools with input schemas, resources, prompts). Omitted:
   * the inspector reads the store `setToolSchemas(offers)` fills.
   */
  offers?: readonly Offer[];
}

/** The right sidebar: settings, one step's form, or the multi-selection. */
export function Inspector({ offers }: InspectorProps) {
  const selected = useDoc((s) => s.selected);
  const step = useDoc((s) => (s.selected.length === 1 ? findStep(s.doc, s.selected[0]!) : undefined));
  const docDiagnostics = useDoc((s) => s.diagnostics);
  const doc = useDoc((s) => s.doc);
  const blueprintDiags = useMemo(() => problemsOf(doc, docDiagnostics).filter((d) => !diagnosticTarget(doc, d).step), [docDiagnostics, doc]);
  const root = useRef<HTMLElement>(null);
  // The tab stays as chosen while the selection moves from step to step.
  const [tab, setTab] = useState<Tab>('form');
  // Another step selected: back to the top, where its run section is.
  const shownId = selected.length === 1 ? selected[0] : null;
  useLayoutEffect(() => {
    // The nearest ancestor that scrolls (the sidebar, whatever the shell calls it).
    for (let el: HTMLElement | null = root.current; el && el !== document.body; el = el.parentElement) {
      if (el.scrollTop <= 0) continue;
      el.scrollTop = 0;
      break;
    }
  }, [shownId]);

  let body;
  if (selected.length === 0) {
    body = (
      <>
        <header className="insp-head">
          <span className="insp-head-title">Blueprint settings</span>
        </header>
        <DiagnosticRows items={blueprintDiags} onPick={(d) => root.current && focusField(root.current, d.pointer)} />
        <ReadOnlyFields>
          <Settings diagnostics={blueprintDiags} />
        </ReadOnlyFields>
      </>
    );
  } else if (selected.length === 1 && step) {
    // Keyed by id: a draft of one step never commits to another.
    body = <StepInspector key={step.id} step={step} tab={tab} setTab={setTab} />;
  } else {
    body = <MultiSelection ids={selected} />;
  }

  const content = (
    <section className="inspector" data-testid="inspector" aria-label="Inspector" ref={root}>
      {body}
    </section>
  );
  return offers ? <OffersOverride.Provider value={offers}>{content}</OffersOverride.Provider> : content;
}
