//! The parts every step node shares: the card (icon, title, subtitle, key fields,
//! badges, a server awaiting approval), the handles, and the diagnostics badge. Test hooks:
//! `step-<id>` on the card, `diag-<id>` on the badge, `handle-<id>-<handle>` on handles.

import { Handle, Position, useConnection } from '@xyflow/react';
import { memo, useState, type ReactNode } from 'react';
import { useDoc } from '../../doc/store';
import type { Json, Step } from '../../doc/types';
import type { StepNodeData } from '../../graph/types';
import { ServerApproval } from './approval';
import { KindIcon } from './icons';
import { BreakpointToggle, QuestionBar, RunStatus, useRunClass, useNodeRun } from './run';
import { StepTitle } from './title';

/** Compact one-line text of a JSON value. */
export function preview(value: Json | undefined, max = 48): string {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/** Whether a card's text of a value is an expression (shown tinted, as n8n does). */
export function isExpression(text: string): boolean {
  return /(^|[^\\])\{\{/.test(text);
}

/**
 * A value on a card, so a fixed value and an expression look different: an expression
 * tinted, a list as its count and first items, a plain string in quotes.
 */
export function ValueText({ value, max = 48, testId }: { value: Json | undefined; max?: number; testId?: string }) {
  if (value === undefined) return null;
  if (Array.isArray(value)) {
    const items = value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
    return (
      <span className="val-list" data-testid={testId} data-value="list" title={JSON.stringify(value)}>
        <span className="val-count">
          list · {value.length}
        </span>{' '}
        {items.length > max ? items.slice(0, max - 1) + '…' : items}
      </span>
    );
  }
  if (typeof value === 'string' && isExpression(value)) {
    return (
      <code className="val-expr" data-testid={testId} data-value="expression" title={value}>
        {preview(value, max)}
      </code>
    );
  }
  return (
    <code className="val-fixed" data-testid={testId} data-value="fixed" title={JSON.stringify(value)}>
      {preview(JSON.stringify(value), max)}
    </code>
  );
}

/** Up to `n` `[key, value]` pairs of an args object (or the args template itself). */
export function argPairs(args: Json | undefined, n = 2): [string, string][] {
  if (args === undefined || args === null) return [];
  if (typeof args !== 'object' || Array.isArray(args)) return [['args', preview(args)]];
  return Object.entries(args)
    .slice(0, n)
    .map(([k, v]) => [k, preview(v)]);
}

export const DiagnosticBadge = memo(function DiagnosticBadge({ id }: { id: string }) {
  const diag = useDoc((s) => s.diagnosticsByStep[id]);
  if (!diag) return null;
  const level = diag.errors > 0 ? 'error' : 'warning';
  const count = diag.errors + diag.warnings;
  const title = diag.items.map((d) => `${d.level === 'error' ? 'Error' : 'Warning'} ${d.code}: ${d.message}`).join('\n');
  return (
    <span className={`diag-badge diag-${level}`} data-testid={`diag-${id}`} title={title}>
      {level === 'error' ? '✕' : '!'} {count}
    </span>
  );
});

/** The tag of a step switched off (`"disabled": true`): the run skips it. */
export function DisabledTag() {
  return (
    <span className="step-disabled-tag" title="Disabled: the run skips this step (right-click → Enable)">
      disabled
    </span>
  );
}

/**
 * A handle; `title` is its hint ("runs after…"), drawn as a label beside it while the
 * pointer rests on it — never a native tooltip, which WebKit leaves on screen after an
 * edge is dragged onto the handle. No hint while an edge is being dragged, nor after a
 * press or a drop on the handle until the pointer leaves it.
 */
export function StepHandle({
  id,
  handle,
  type,
  position,
  className,
  title,
}: {
  id: string;
  handle: string;
  type: 'source' | 'target';
  position: Position;
  className?: string;
  title?: string;
}) {
  const connecting = useConnection((c) => c.inProgress);
  const [hover, setHover] = useState<'off' | 'on' | 'quiet'>('off');
  return (
    <Handle
      type={type}
      position={position}
      id={handle}
      className={className ? `handle ${className}` : 'handle'}
      data-testid={`handle-${id}-${handle}`}
      aria-label={title}
      // Moving on it shows the hint, not entering it: a card moved or an edge added under
      // a resting pointer (after a drop) "enters" the handle without anyone pointing at it.
      onPointerMove={() => setHover((h) => (h === 'off' ? 'on' : h))}
      onPointerLeave={() => setHover('off')}
      onPointerDown={() => setHover('quiet')}
      onPointerUp={() => setHover('quiet')}
    >
      {title && hover === 'on' && !connecting ? (
        <span className={`handle-hint handle-hint-${position}`} data-testid={`handle-hint-${id}-${handle}`}>
          {title}
        </span>
      ) : null}
    </Handle>
  );
}

export interface CardProps {
  id: string;
  kind: string;
  data: StepNodeData<Step>;
  selected: boolean;
  /** Server and tool, uri, prompt, workflow … */
  subtitle?: string;
  /** One or two key fields. */
  fields?: [string, string][];
  /** Extra rows (switch cases with their handles). */
  children?: ReactNode;
  /** No generic `out` handle on the right (a switch puts it elsewhere). */
  outHandle?: boolean;
}

/** A step card with its in/out/fallback handles. */
export function StepCard({ id, kind, data, selected, subtitle, fields = [], children, outHandle = true }: CardProps) {
  const { step } = data;
  const badges: string[] = [];
  if (data.fallbackOf) badges.push(`fallback of ${data.fallbackOf}`);
  if (step.fallback) badges.push(`fallback → ${step.fallback}`);
  if (step.retry && typeof step.retry.attempts === 'number' && step.retry.attempts > 1) badges.push(`retry ×${step.retry.attempts}`);
  if (step.on_error === 'continue') badges.push('continue on error');
  if (typeof step.timeout_ms === 'number') badges.push(`timeout ${step.timeout_ms} ms`);
  if (step.save) badges.push(`save → ${step.save}`);
  const run = useNodeRun(id);
  const runClass = useRunClass(id, run);
  const disabled = step.disabled === true;
  return (
    <div
      className={`step-card kind-${kind}${selected ? ' is-selected' : ''}${data.fallbackOf ? ' is-fallback' : ''}${disabled ? ' is-disabled' : ''}${runClass}`}
      data-testid={`step-${id}`}
      data-kind={kind}
      title={step.note}
    >
      <StepHandle id={id} handle="in" type="target" position={Position.Left} title="runs after…" />
      <div className="step-head">
        <BreakpointToggle id={id} />
        <KindIcon kind={kind} />
        <StepTitle id={id} name={step.name} />
        {disabled && <DisabledTag />}
        <DiagnosticBadge id={id} />
      </div>
      <div className="step-sub">
        {step.name ? <span className="step-id">{step.id}</span> : null}
        {subtitle ? <span className="step-target">{subtitle}</span> : null}
      </div>
      {fields.length > 0 && (
        <dl className="step-fields">
          {fields.map(([k, v]) => (
            <div key={k} className="step-field">
              <dt>{k}</dt>
              <dd className={isExpression(v) ? 'is-expr' : undefined}>{v}</dd>
            </div>
          ))}
        </dl>
      )}
      {children}
      {'server' in step && typeof step.server === 'string' && step.server ? <ServerApproval id={id} server={step.server} selected={selected} /> : null}
      {badges.length > 0 && (
        <div className="step-badges">
          {badges.map((b) => (
            <span key={b} className="step-badge">
              {b}
            </span>
          ))}
        </div>
      )}
      {run && <RunStatus id={id} node={run} />}
      {run?.question && <QuestionBar id={id} node={run} />}
      {outHandle && <StepHandle id={id} handle="out" type="source" position={Position.Right} title="then…" />}
      <StepHandle id={id} handle="fallback" type="source" position={Position.Bottom} className="handle-fallback" title="on failure, run…" />
    </div>
  );
}
