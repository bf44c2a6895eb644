//! `mcpflow list`, `mcpflow runs [BLUEPRINT] [--waiting]`, `mcpflow show RUN [--events]`: what the
//! store holds — the blueprints and the history of runs the CLI, the studio, `serve`
//! and the scheduler recorded; `mcpflow runs --remove RUN` removes one. A run that
//! cannot be read back is skipped, with a warning that names the command removing it.

use crate::app::{AppArgs, open_app};
use crate::stdout::outln;
use mcpflow_app::runs::{Rerun, step_records};
use serde_json::json;
use std::process::ExitCode;

pub fn list(json_out: bool) -> anyhow::Result<ExitCode> {
    let list: Vec<mcpflow_app::BlueprintMeta> = match through_service("blueprints/list", json!({}))? {
        Some(list) => serde_json::from_value(list)?,
        None => crate::app::open_reader()?.blueprints()?,
    };
    if json_out {
        let list: Vec<_> = list
            .iter()
            .map(|m| json!({ "id": m.id, "name": m.name, "rev": m.rev, "saved_at": m.saved_at, "description": m.description }))
            .collect();
        outln!("{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        outln!("no blueprints in the store (save one with the studio, `mcpflow import` or `save_workflow`)")?;
    }
    for m in list {
        outln!("{:<28} rev {:<4} {}  {}", m.id, m.rev, m.saved_at, m.name.unwrap_or_default())?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn runs(blueprint: Option<&str>, limit: usize, json_out: bool) -> anyhow::Result<ExitCode> {
    let params = json!({ "blueprint": blueprint, "limit": limit, "with_skipped": true });
    let list: mcpflow_app::RunList = match through_service("runs/list", params)? {
        // A service from before `with_skipped` answers the bare list.
        Some(runs @ serde_json::Value::Array(_)) => {
            mcpflow_app::RunList { runs: serde_json::from_value(runs)?, skipped: Vec::new() }
        }
        Some(list) => serde_json::from_value(list)?,
        None => crate::app::open_reader()?.run_list(blueprint, limit)?,
    };
    warn_skipped(&list.skipped);
    let runs = list.runs;
    if json_out {
        outln!("{}", serde_json::to_string_pretty(&runs)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        outln!("no recorded runs (record one with `mcpflow run --store FILE`)")?;
    }
    for r in runs {
        let duration = r.envelope.as_ref().map(|e| format!("{} ms", e.duration_ms)).unwrap_or_default();
        let rerun = r.rerun_of.as_ref().map(|o| format!("  re-run of {}", o.run)).unwrap_or_default();
        let by = match &r.client {
            Some(client) => format!("{} ({client})", r.trigger),
            None => r.trigger.clone(),
        };
        outln!(
            "{}  {:<24} {:<11} {:<9} {}  {}{rerun}",
            r.id,
            r.blueprint,
            r.status.as_str(),
            by,
            r.started_at,
            duration
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Says on stderr which runs were skipped because they cannot be read, each with the
/// command that removes it.
#[allow(clippy::print_stderr)]
pub(crate) fn warn_skipped(skipped: &[mcpflow_app::Unreadable]) {
    for unreadable in skipped {
        eprintln!("warning: skipped {unreadable}");
    }
}

/// `mcpflow runs --remove RUN`: removes a recorded run and its events — one that cannot
/// be read too (what `runs`, `show` and `export` name in their warnings).
#[allow(clippy::print_stderr)]
pub fn remove(run_id: &str) -> anyhow::Result<ExitCode> {
    let removed = match through_service("runs/remove", json!({ "run_id": run_id }))? {
        Some(answer) => answer["removed"].as_bool().unwrap_or(false),
        None => open_app(&AppArgs::default(), None)?.remove_run(run_id)?,
    };
    if !removed {
        eprintln!("error: no run `{run_id}` in the store; `mcpflow runs` lists the recorded runs");
        return Ok(ExitCode::from(2));
    }
    eprintln!("removed run {run_id} and its events");
    Ok(ExitCode::SUCCESS)
}

/// The answer of the data folder's service to `method`, when a service holds the folder
/// (its store is then locked to everyone else); `None` when none runs, or with `--db`
/// (the store is then the database's).
pub(crate) fn through_service(method: &str, params: serde_json::Value) -> anyhow::Result<Option<serde_json::Value>> {
    let home = mcpflow_app::home::data_dir();
    if crate::app::database().is_some() || !mcpflow_service::endpoint::present(&home) {
        return Ok(None);
    }
    // On a thread of its own, so it works from inside a command's runtime too.
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                runtime.block_on(async {
                    let failed = |e: mcpflow_service::WireError| anyhow::anyhow!("{} [{}]", e.message, e.code);
                    match mcpflow_service::Client::connect(&home, "cli").await.map_err(failed)? {
                        Some(mut client) => Ok(Some(client.call(method, params).await.map_err(failed)?)),
                        None => Ok(None),
                    }
                })
            })
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the service client thread failed")))
    })
}

/// `mcpflow runs --waiting`: the runs waiting for an answer, each question with its
/// fields and the command that answers it.
pub fn waiting(json_out: bool) -> anyhow::Result<ExitCode> {
    let questions = open_questions(None)?;
    let blueprint_of = |run: &str| {
        questions.iter().find(|(r, _, _)| r == run).map(|(_, blueprint, _)| blueprint.clone()).unwrap_or_default()
    };
    let questions: Vec<(String, mcpflow_engine::Question)> =
        questions.iter().map(|(run, _, q)| (run.clone(), q.clone())).collect();
    if json_out {
        let list: Vec<_> = questions
            .iter()
            .map(|(run, q)| json!({ "run": run, "blueprint": blueprint_of(run), "status": "waiting", "question": q }))
            .collect();
        outln!("{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if questions.is_empty() {
        outln!("no run waits for an answer")?;
    }
    for (run, q) in &questions {
        let at = if q.path.is_empty() {
            String::new()
        } else {
            format!(" iteration {}", q.path.iter().map(u32::to_string).collect::<Vec<_>>().join("/"))
        };
        outln!("{run}  {:<24} waiting  step `{}`{at}: {}", blueprint_of(run), q.step, q.message)?;
        match &q.url {
            Some(url) => outln!("    visit: {url}")?,
            None => outln!("    fields: {}", fields(q))?,
        }
        outln!("    answer: mcpflow answer {run} {} --answers FILE", q.step)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The open questions (of one run, or of all), with each run's blueprint: through the
/// service when one holds the data folder, else from the store.
fn open_questions(run: Option<&str>) -> anyhow::Result<Vec<(String, String, mcpflow_engine::Question)>> {
    if let Some(list) = through_service("questions/list", json!({ "run_id": run }))? {
        let list: Vec<serde_json::Value> = serde_json::from_value(list)?;
        return list
            .into_iter()
            .map(|item| {
                let run = item["run_id"].as_str().unwrap_or_default().to_owned();
                let blueprint = item["blueprint"].as_str().unwrap_or_default().to_owned();
                Ok((run, blueprint, serde_json::from_value(item["question"].clone())?))
            })
            .collect();
    }
    let app = crate::app::open_reader()?;
    let blueprint_of = |run: &str| app.store().run(run).ok().flatten().map(|r| r.blueprint).unwrap_or_default();
    Ok(app.questions(run).into_iter().map(|(r, q)| (r.clone(), blueprint_of(&r), q)).collect())
}

/// A question's fields: `name (type, required)`, or what an approval wants.
fn fields(q: &mcpflow_engine::Question) -> String {
    if q.asking == mcpflow_engine::Asking::Approval {
        return "approve (true or false)".to_owned();
    }
    let schema = q.schema.clone().unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let list: Vec<String> = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|props| {
            props
                .iter()
                .map(|(name, field)| {
                    let kind = field.get("type").and_then(|t| t.as_str()).unwrap_or("choice");
                    let mark = if required.contains(&name.as_str()) { ", required" } else { "" };
                    format!("{name} ({kind}{mark})")
                })
                .collect()
        })
        .unwrap_or_default();
    if list.is_empty() { "none".to_owned() } else { list.join(", ") }
}

pub fn show(run_id: &str, events: bool, json_out: bool) -> anyhow::Result<ExitCode> {
    let detail = match through_service("runs/get", json!({ "run_id": run_id }))? {
        Some(detail) => mcpflow_app::runs::RunDetail {
            record: serde_json::from_value(detail["record"].clone())?,
            events: serde_json::from_value(detail["events"].clone())?,
        },
        None => crate::app::open_reader()?.run_detail(run_id)?,
    };
    if events {
        for e in &detail.events {
            outln!("{}", serde_json::to_string(e)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let steps = step_records(&detail.events);
    if json_out {
        let doc = json!({ "run": detail.record, "trace_id": detail.trace_id(), "steps": steps });
        outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let r = &detail.record;
    outln!("run {}  blueprint {}  {}  ({})", r.id, r.blueprint, r.status.as_str(), r.trigger)?;
    outln!("started {}  finished {}", r.started_at, r.finished_at.as_deref().unwrap_or("-"))?;
    if let Some(trace) = detail.trace_id() {
        outln!("trace {trace}")?;
    }
    if let Some(o) = &r.rerun_of {
        let what = match o.mode {
            Rerun::Step => "alone",
            Rerun::FromHere => "and every step after it",
        };
        outln!("re-run of run {}: step `{}` {what}, the other steps pinned to that run's outputs", o.run, o.step)?;
    }
    for s in &steps {
        let ms = s["duration_ms"].as_u64().map(|d| format!("{d} ms")).unwrap_or_default();
        let error = s["error"]["message"].as_str().map(|m| format!("  {m}")).unwrap_or_default();
        outln!(
            "  {:<32} {:<10} {:>9}{error}",
            s["step"].as_str().unwrap_or(""),
            s["status"].as_str().unwrap_or(""),
            ms
        )?;
    }
    if let Some(envelope) = &r.envelope {
        outln!("{} events; output: {}", detail.events.len(), serde_json::to_string(&envelope.output)?)?;
    }
    for (_, _, q) in open_questions(Some(run_id))? {
        outln!(
            "waits at step `{}`: {} ({}); answer: mcpflow answer {run_id} {} --answers FILE",
            q.step,
            q.message,
            fields(&q),
            q.step
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
