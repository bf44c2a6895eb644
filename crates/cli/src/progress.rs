//! What `mcpflow run` shows while a run goes: on a terminal, a live bar (top-level steps
//! done / total, the steps running now, loop progress); otherwise one plain line per
//! top-level event and per failure or retry at any depth.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcpflow_engine::{EventKind, RunEvent, StepStatus};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Mutex;
use std::time::Duration;

pub struct Progress {
    inner: Mutex<Inner>,
}

struct Inner {
    bar: Option<ProgressBar>,
    running: BTreeMap<String, String>,
    quiet: bool,
}

impl Progress {
    /// `total`: the number of top-level steps. `tty`: draw a live bar on stderr.
    pub fn new(total: u64, tty: bool, quiet: bool) -> Self {
        let bar = (tty && !quiet).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style =
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} steps  {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Progress { inner: Mutex::new(Inner { bar, running: BTreeMap::new(), quiet }) }
    }

    pub fn on_event(&self, e: &RunEvent) {
        let Ok(mut inner) = self.inner.lock() else { return };
        let secs = e.at_ms as f64 / 1000.0;
        let line = match &e.kind {
            EventKind::StepStarted { step, path, attempt, .. } if path.is_empty() => {
                inner.running.insert(step.clone(), step.clone());
                (*attempt == 1).then(|| format!("[{secs:7.2}s] started   {step}"))
            }
            EventKind::StepFinished { step, path, status, error, duration_ms, recovered_by, .. } => {
                if path.is_empty() {
                    inner.running.remove(step);
                    if let Some(bar) = &inner.bar {
                        bar.inc(1);
                    }
                }
                match (status, error) {
                    (StepStatus::Failed, Some(err)) => {
                        Some(format!("[{secs:7.2}s] failed    {step}{} ({}): {}", at(path), err.code, err.message))
                    }
                    (StepStatus::Succeeded, _) if path.is_empty() => Some(match recovered_by {
                        Some(by) => format!("[{secs:7.2}s] recovered {step} by its fallback {by}"),
                        None => format!("[{secs:7.2}s] succeeded {step} ({duration_ms} ms)"),
                    }),
                    _ => None,
                }
            }
            EventKind::StepSkipped { step, path, .. } if path.is_empty() => {
                if let Some(bar) = &inner.bar {
                    bar.inc(1);
                }
                Some(format!("[{secs:7.2}s] skipped   {step}"))
            }
            EventKind::StepRetrying { step, path, attempt, delay_ms, error } => Some(format!(
                "[{secs:7.2}s] retrying  {step}{} (attempt {attempt} in {delay_ms} ms after {}: {})",
                at(path),
                error.code,
                error.message
            )),
            EventKind::StepProgress { step, path, message: Some(m), .. } if path.is_empty() => {
                inner.running.insert(step.clone(), format!("{step} {m}"));
                None
            }
            EventKind::StepTaskStarted { step, path, server, task_id, .. } => {
                Some(format!("[{secs:7.2}s] task      {step}{} runs as task `{task_id}` on `{server}`", at(path)))
            }
            // The server's words as it wrote them; only the level is ours to spell.
            EventKind::Log { level, message, .. } => {
                Some(format!("[{secs:7.2}s] {}: {message}", format!("{level:?}").to_ascii_lowercase()))
            }
            EventKind::RunPaused { reason, step, .. } => {
                Some(format!("[{secs:7.2}s] paused ({reason:?}) {}", step.clone().unwrap_or_default()))
            }
            EventKind::RunFinished { envelope } => {
                if let Some(bar) = inner.bar.take() {
                    bar.finish_and_clear();
                }
                let s = &envelope.summary;
                Some(format!(
                    "[{secs:7.2}s] {} — {}: {} succeeded, {} failed, {} skipped; {}",
                    envelope.status.as_str(),
                    plural(s.steps, "step"),
                    s.succeeded,
                    s.failed,
                    s.skipped,
                    plural(s.tool_calls, "tool call")
                ))
            }
            _ => None,
        };
        let running: Vec<String> = inner.running.values().cloned().collect();
        if let Some(bar) = &inner.bar {
            bar.set_message(running.join("  "));
        }
        if let Some(line) = line
            && !inner.quiet
        {
            match &inner.bar {
                Some(bar) => bar.println(line),
                None => {
                    let _ = writeln!(std::io::stderr(), "{line}");
                }
            }
        }
    }
}

fn at(path: &[u32]) -> String {
    if path.is_empty() { String::new() } else { format!(" {path:?}") }
}

/// `1 step`, `3 steps`.
fn plural(n: impl Into<u64>, word: &str) -> String {
    let n = n.into();
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}
