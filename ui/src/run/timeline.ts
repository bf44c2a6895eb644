//! What the timeline says about a run's events: a label per event in words and wall-clock
//! time ("12:03:04.120 · fetch finished"), and the markers along the slider (failures and
//! pauses). Steps are called by their `name` when they have one (`names`), else by id.
//! Pure functions over the events; the history panel draws them.

/** Step id → the name people gave it (steps without a name are not in it). */
export type StepNames = Readonly<Record<string, string>>;

const NO_NAMES: StepNames = {};

import type { RunEvent } from './events';

/** `hh:mm:ss.mmm` (local time) of `startMs + atMs`; `+1.25 s` from the start when the start is unknown. */
export function clockTime(startMs: number | null, atMs: number): string {
  if (startMs === null || !Number.isFinite(startMs)) {
    return `+${atMs < 1000 ? `${Math.round(atMs)} ms` : `${(atMs / 1000).toFixed(2)} s`}`;
  }
  const d = new Date(startMs + atMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

function where(path: readonly number[] | undefined): string {
  return path && path.length ? ` (iteration ${path.join('.')})` : '';
}

function cut(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const ANSWERED = { accept: 'answered', decline: 'declined', cancel: 'question cancelled' } as const;

/** One event in words: `fetch finished`, `pick failed: TOOL_ERROR`, `paused before pick`. */
export function eventText(ev: RunEvent, names: StepNames = NO_NAMES): string {
  if ('step' in ev && ev.step && names[ev.step]) ev = { ...ev, step: names[ev.step]! } as RunEvent;
  switch (ev.type) {
    case 'RunStarted':
      return 'run started';
    case 'StepStarted':
      return `${ev.step} started${where(ev.path)}${ev.attempt > 1 ? ` · attempt ${ev.attempt}` : ''}`;
    case 'StepRetrying':
      return `${ev.step} failed, retrying (attempt ${ev.attempt})${where(ev.path)}`;
    case 'StepProgress':
      return `${ev.step} progress ${ev.total ? `${ev.progress}/${ev.total}` : ev.progress}${where(ev.path)}`;
    case 'StepFinished':
      if (ev.status === 'failed') return `${ev.step} failed${where(ev.path)}${ev.error ? `: ${ev.error.code}` : ''}`;
      if (ev.status === 'succeeded' && ev.attempts === 0) return `${ev.step} pinned from the earlier run`;
      return `${ev.step} ${ev.status === 'succeeded' ? 'finished' : ev.status}${where(ev.path)}${ev.recovered_by ? ` (by ${ev.recovered_by})` : ''}`;
    case 'StepSkipped':
      return `${ev.step} ${ev.reason === 'disabled' ? 'disabled, not run' : 'skipped'}${where(ev.path)}`;
    case 'StepWaiting':
      return `${ev.step} waits for ${ev.question.asking === 'approval' ? 'approval' : ev.question.server ? `an answer to ${ev.question.server}` : 'input'}${where(ev.path)}`;
    case 'StepAnswered':
      return `${ev.step} ${ANSWERED[ev.action]}${where(ev.path)}`;
    case 'StepSampling':
      return `${ev.server} asks the model during ${ev.step}${where(ev.path)}`;
    case 'StepSampled':
      return ev.error
        ? `${ev.step}: the model did not answer ${ev.server}${where(ev.path)}: ${ev.error.code}`
        : `${ev.step}: the model answered ${ev.server}${where(ev.path)}`;
    case 'RunPaused':
      if (!ev.step) return ev.reason === 'requested' ? 'paused on request' : 'paused';
      return ev.reason === 'stepped' ? `paused after stepping into ${ev.step}${where(ev.path)}` : `paused before ${ev.step}${where(ev.path)}`;
    case 'RunResumed':
      return 'resumed';
    case 'Log':
      return `${ev.step ? `${ev.step}: ` : ''}${cut(ev.message)}`;
    case 'RunFinished':
      return `run ${ev.envelope.status}`;
  }
}

/** Time since the run started: `+0 ms`, `+850 ms`, `+1.25 s`, `+2 min 05 s`. */
export function sinceStart(atMs: number): string {
  const ms = Math.max(0, Math.round(atMs));
  if (ms < 1000) return `+${ms} ms`;
  if (ms < 60_000) return `+${(ms / 1000).toFixed(2)} s`;
  const s = Math.floor(ms / 1000);
  return `+${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/**
 * The timeline's label of an event: the time since the run started, as n8n's execution
 * log and a profiler count it (`+1.25 s · fetch finished`); the clock time is the
 * event's in `clockTime`.
 */
export function eventLabel(ev: RunEvent, _startMs: number | null, names: StepNames = NO_NAMES): string {
  return `${sinceStart(ev.at_ms)} · ${eventText(ev, names)}`;
}

export interface TimelineMarker {
  /** The event's index in the list (the slider's value). */
  index: number;
  seq: number;
  kind: 'failure' | 'pause';
  /** What a tooltip says. */
  label: string;
}

/** Failures (a step failed for good, or the run did) and pauses, in order. */
export function timelineMarkers(events: readonly RunEvent[], startMs: number | null, names: StepNames = NO_NAMES): TimelineMarker[] {
  const out: TimelineMarker[] = [];
  events.forEach((ev, index) => {
    const failed =
      (ev.type === 'StepFinished' && ev.status === 'failed') ||
      (ev.type === 'RunFinished' && (ev.envelope.status === 'failed' || ev.envelope.status === 'partial'));
    if (failed) out.push({ index, seq: ev.seq, kind: 'failure', label: eventLabel(ev, startMs, names) });
    else if (ev.type === 'RunPaused') out.push({ index, seq: ev.seq, kind: 'pause', label: eventLabel(ev, startMs, names) });
  });
  return out;
}
