//! `mcpflow list`, `mcpflow runs [BLUEPRINT]`, `mcpflow show RUN [--events]`: what the
//! store holds — the blueprints and the history of runs the CLI, the studio, `serve`
//! and the scheduler recorded.

use crate::app::{AppArgs, open_app};
use mcpflow_app::runs::{Rerun, step_records};
use serde_json::json;
use std::process::ExitCode;

#[allow(clippy::print_stdout)]
pub fn list(json_out: bool) -> anyhow::Result<ExitCode> {
    let app = open_app(&AppArgs::default(), None)?;
    let list = app.blueprints()?;
    if json_out {
        let list: Vec<_> = list
            .iter()
            .map(|m| json!({ "id": m.id, "name": m.name, "rev": m.rev, "saved_at": m.saved_at, "description": m.description }))
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        println!("no blueprints in the store (save one with the studio, `mcpflow import` or `save_workflow`)");
    }
    for m in list {
        println!("{:<28} rev {:<4} {}  {}", m.id, m.rev, m.saved_at, m.name.unwrap_or_default());
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stdout)]
pub fn runs(blueprint: Option<&str>, limit: usize, json_out: bool) -> anyhow::Result<ExitCode> {
    let app = open_app(&AppArgs::default(), None)?;
    let runs = app.runs(blueprint, limit)?;
    if json_out {
        println!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        println!("no recorded runs (record one with `mcpflow run --store FILE`)");
    }
    for r in runs {
        let duration = r.envelope.as_ref().map(|e| format!("{} ms", e.duration_ms)).unwrap_or_default();
        let rerun = r.rerun_of.as_ref().map(|o| format!("  re-run of {}", o.run)).unwrap_or_default();
        println!(
            "{}  {:<24} {:<11} {:<9} {}  {}{rerun}",
            r.id,
            r.blueprint,
            r.status.as_str(),
            r.trigger,
            r.started_at,
            duration
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stdout)]
pub fn show(run_id: &str, events: bool, json_out: bool) -> anyhow::Result<ExitCode> {
    let app = open_app(&AppArgs::default(), None)?;
    let detail = app.run_detail(run_id)?;
    if events {
        for e in &detail.events {
            println!("{}", serde_json::to_string(e)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let steps = step_records(&detail.events);
    if json_out {
        println!("{}", serde_json::to_string_pretty(&json!({ "run": detail.record, "steps": steps }))?);
        return Ok(ExitCode::SUCCESS);
    }
    let r = &detail.record;
    println!("run {}  blueprint {}  {}  ({})", r.id, r.blueprint, r.status.as_str(), r.trigger);
    println!("started {}  finished {}", r.started_at, r.finished_at.as_deref().unwrap_or("-"));
    if let Some(o) = &r.rerun_of {
        let what = match o.mode {
            Rerun::Step => "alone",
            Rerun::FromHere => "and every step after it",
        };
        println!("re-run of run {}: step `{}` {what}, the other steps pinned to that run's outputs", o.run, o.step);
    }
    for s in &steps {
        let ms = s["duration_ms"].as_u64().map(|d| format!("{d} ms")).unwrap_or_default();
        let error = s["error"]["message"].as_str().map(|m| format!("  {m}")).unwrap_or_default();
        println!(
            "  {:<32} {:<10} {:>9}{error}",
            s["step"].as_str().unwrap_or(""),
            s["status"].as_str().unwrap_or(""),
            ms
        );
    }
    if let Some(envelope) = &r.envelope {
        println!("{} events; output: {}", detail.events.len(), serde_json::to_string(&envelope.output)?);
    }
    Ok(ExitCode::SUCCESS)
}
