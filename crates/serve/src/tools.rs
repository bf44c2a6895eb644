//! The mediator's tools (DESIGN §5): their schemas and what each does. Every answer is
//! JSON (sent as `structuredContent` and as text); a failure is `isError: true` with
//! `{ error: { code, message, … } }`.

use super::call::{Call, Settled, app_failure, failure, string_arg};
use super::people::{Caller, Reach};
use mcpflow_app::blueprints::document;
use mcpflow_app::error::AppError;
use mcpflow_app::pipeline::{self, PIPELINE_ID, PipelineError};
use mcpflow_app::runs::{StartRun, Target, Trigger, step_records};
use mcpflow_blueprint::{Code, Diagnostic, ServerStatus, ToolCatalog as _};
use mcpflow_engine::results::tool_output;
use mcpflow_engine::{CallRequest, CallTarget, EventKind, RunStatus};
use rmcp::model::ProgressNotificationParam;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{broadcast, watch};

/// The gap between a run's last progress notification and its response (see `watch`).
const PROGRESS_SETTLE: std::time::Duration = std::time::Duration::from_millis(20);

type Answer = Result<Value, Value>;

impl Call<'_> {
    /// The calling client's name (`clientInfo.name`), recorded with the runs it starts.
    pub(super) fn client_name(&self) -> Option<String> {
        self.context.peer.peer_info().map(|info| info.client_info.name.clone())
    }

    pub(super) async fn dispatch(&self, name: &str, args: Value) -> Answer {
        match name {
            "list_servers" => self.list_servers(),
            "list_tools" => self.list_tools(&args).await,
            "call_tool" => self.call_tool(&args).await,
            "validate_workflow" => self.validate(&args).await,
            "save_workflow" => self.save(&args),
            "list_workflows" => self.list_workflows(),
            "get_workflow" => self.get_workflow(&args),
            "run_workflow" => self.run_workflow(&args).await,
            "run_pipeline" => self.run_pipeline(&args).await,
            "get_run" => self.get_run(&args),
            "answer_run" => self.answer_run(&args).await,
            "list_runs" => self.list_runs(&args),
            "cancel_run" => self.cancel_run(&args).await,
            "resume_run" => self.resume_run(&args).await,
            "delete_workflow" => self.delete_workflow(&args),
            "test_workflow" => self.test_workflow(&args).await,
            // Exposed blueprints are found by the caller (`Mediator::call_tool`).
            other => Err(failure(
                "TOOL_NOT_FOUND",
                format!("mcpflow has no tool `{other}`; tools/list shows the built-in and exposed ones"),
            )),
        }
    }

    /// Runs exposed blueprint `id` with the tool's arguments as its inputs.
    pub(super) async fn run_exposed(&self, id: &str, args: Value) -> Answer {
        self.run_workflow(&json!({ "id": id, "inputs": args })).await
    }

    fn list_servers(&self) -> Answer {
        let servers: Vec<Value> = self
            .app
            .servers()
            .into_iter()
            .map(|s| json!({ "name": s.name, "transport": s.transport, "command": s.command, "url": s.url, "approved": s.approved }))
            .collect();
        Ok(json!({ "servers": servers }))
    }

    async fn list_tools(&self, args: &Value) -> Answer {
        let one = args.get("server").and_then(Value::as_str);
        let names = match one {
            Some(one) => vec![one.to_owned()],
            None => self.app.pool().server_names(),
        };
        let mut tools = Vec::new();
        let mut unreachable = Vec::new();
        for name in names {
            match self.app.test_server(&name).await {
                Ok(found) => tools.extend(found),
                Err(e) => unreachable.push(json!({ "server": name, "code": e.code(), "message": e.to_string() })),
            }
        }
        // The one server asked for could not be listed: the call failed.
        if let (Some(_), [only]) = (one, unreachable.as_slice()) {
            return Err(json!({ "error": only }));
        }
        Ok(json!({ "tools": tools, "unreachable": unreachable }))
    }

    async fn call_tool(&self, args: &Value) -> Answer {
        let tool = string_arg(args, "tool")?;
        let server = args.get("server").and_then(Value::as_str).map(str::to_owned);
        let arguments = match args.get("args") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => return Err(failure("BAD_REQUEST", "`args` must be an object")),
        };
        let cancel = self.context.ct.child_token();
        // A trial call asks its caller, and never before a destructive tool: the agent
        // that calls it decides.
        let ask = Some(mcpflow_engine::CallAsk {
            sink: super::people::direct(self.context, &tool),
            confirm_destructive: false,
        });
        let request = CallRequest {
            target: CallTarget::Tool { server, tool, args: arguments },
            timeout: None,
            cancel,
            progress: None,
            stack: self.stack.clone(),
            tasks: Default::default(),
            ask,
            sample: None,
            trace: self.trace.call_trace(),
        };
        match self.app.pool().call(request).await {
            Ok(raw) => match tool_output(&raw) {
                Ok(output) => Ok(json!({ "result": raw, "output": output })),
                // The downstream tool failed: so did the call asked for.
                Err(failed) => Err(json!({
                    "result": raw,
                    "error": { "code": "TOOL_FAILED", "message": format!("the tool answered with an error: {}", failed.0) },
                })),
            },
            Err(e) => Err(failure(e.code(), e.to_string())),
        }
    }

    async fn validate(&self, args: &Value) -> Answer {
        // A blueprint given as text is read strictly: what the reader refuses (a
        // duplicate key, …) is a finding with its line and column in that text.
        let doc = match document(args.get("blueprint").unwrap_or(&Value::Null)) {
            Ok(doc) => doc,
            Err(AppError::Invalid(diagnostics)) => {
                let diagnostics: Vec<_> = diagnostics.into_iter().map(super::format::in_band).collect();
                return Ok(json!({ "valid": false, "diagnostics": diagnostics }));
            }
            Err(e) => return Err(app_failure(&e)),
        };
        self.app.refuse_blueprint_env(&doc).map_err(|e| app_failure(&e))?;
        if args.get("check_tools").and_then(Value::as_bool) == Some(true) {
            // Listed first, so their tools are checked; one that cannot be listed is
            // SERVER_UNREACHABLE in the report.
            for server in self.unlisted(&doc) {
                let _ = self.app.pool().discover(&server).await;
            }
        }
        let mut report = self.app.validate(&doc);
        let unlisted = self.unlisted(&doc);
        if !unlisted.is_empty() {
            let names = unlisted.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ");
            report.diagnostics.push(
                Diagnostic::new(
                    Code::ToolsNotChecked,
                    "",
                    format!("the tools of {names} were not checked: not listed yet (validating starts no server)"),
                )
                .with_hint("validate again with `check_tools: true` (it starts them), or call list_tools first"),
            );
        }
        let valid = !report.has_errors();
        let diagnostics: Vec<_> = report.diagnostics.into_iter().map(super::format::in_band).collect();
        Ok(json!({ "valid": valid, "diagnostics": diagnostics }))
    }

    /// The configured servers the steps of `doc` name that have not been listed yet.
    fn unlisted(&self, doc: &Value) -> Vec<String> {
        fn walk(steps: &Value, out: &mut Vec<String>) {
            for step in steps.as_array().into_iter().flatten() {
                if let Some(server) = step.get("server").and_then(Value::as_str)
                    && !out.iter().any(|s| s == server)
                {
                    out.push(server.to_owned());
                }
                if let Some(body) = step.get("steps") {
                    walk(body, out);
                }
            }
        }
        let mut named = Vec::new();
        walk(doc.get("steps").unwrap_or(&Value::Null), &mut named);
        let catalog = self.app.pool().listed_catalog();
        named.retain(|s| matches!(catalog.server(s), ServerStatus::NotListed));
        named
    }

    fn save(&self, args: &Value) -> Answer {
        let doc = document(args.get("blueprint").unwrap_or(&Value::Null)).map_err(|e| app_failure(&e))?;
        self.app.refuse_blueprint_env(&doc).map_err(|e| app_failure(&e))?;
        self.exposable(&doc)?;
        let saved = self.app.save_blueprint(&doc).map_err(|e| app_failure(&e))?;
        Ok(json!({
            "id": saved.meta.id,
            "rev": saved.meta.rev,
            "saved_at": saved.meta.saved_at,
            "warnings": saved.warnings,
        }))
    }

    /// A blueprint with `expose: true` is a tool named by its id: not a built-in tool's
    /// name, nor another exposed blueprint's (hosts read `-` and `_` alike).
    fn exposable(&self, doc: &Value) -> Result<(), Value> {
        let (Some(true), Some(id)) =
            (doc.get("expose").and_then(Value::as_bool), doc.get("id").and_then(Value::as_str))
        else {
            return Ok(());
        };
        let taken = |why: String| {
            let mut v = failure(
                "EXPOSE_NAME_TAKEN",
                format!(
                    "blueprint `{id}` is exposed as the tool `{id}`, but {why}; give it another id, or save it without `expose`"
                ),
            );
            v["error"]["pointer"] = json!("/id");
            v
        };
        if super::builtin::is_builtin(id) {
            return Err(taken(format!("`{id}` is a built-in tool of mcpflow")));
        }
        let same = |name: &str| name.replace('-', "_") == id.replace('-', "_");
        let exposed = self.app.exposed().map_err(|e| app_failure(&e))?;
        match exposed.iter().find(|e| e.id != id && same(&e.id)) {
            Some(other) => Err(taken(format!("the exposed blueprint `{}` has that tool name", other.id))),
            None => Ok(()),
        }
    }

    fn list_workflows(&self) -> Answer {
        let list = self.app.blueprints().map_err(|e| app_failure(&e))?;
        let list: Vec<Value> = list
            .into_iter()
            .map(|m| json!({ "id": m.id, "name": m.name, "description": m.description, "rev": m.rev, "saved_at": m.saved_at }))
            .collect();
        Ok(json!({ "workflows": list }))
    }

    fn get_workflow(&self, args: &Value) -> Answer {
        let id = string_arg(args, "id")?;
        let stored = self.app.blueprint(&id).map_err(|e| app_failure(&e))?;
        Ok(
            json!({ "id": stored.meta.id, "rev": stored.meta.rev, "saved_at": stored.meta.saved_at, "blueprint": stored.json }),
        )
    }

    async fn run_workflow(&self, args: &Value) -> Answer {
        let target = match (args.get("id").and_then(Value::as_str), args.get("blueprint")) {
            (Some(id), None) => Target::Stored(id.to_owned()),
            (None, Some(doc)) => Target::Inline(doc.clone()),
            _ => return Err(failure("BAD_REQUEST", "give either `id` (a stored blueprint) or `blueprint` (inline)")),
        };
        if let Target::Inline(doc) = &target {
            let doc = document(doc).map_err(|e| app_failure(&e))?;
            self.app.refuse_blueprint_env(&doc).map_err(|e| app_failure(&e))?;
        }
        let inputs = match args.get("inputs") {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return Err(failure("BAD_REQUEST", "`inputs` must be an object")),
        };
        // `detail` was checked against the schema (`summary`, `steps` or `output`); the
        // mediator shapes an `output` answer (`exposed::output_only`).
        let steps_detail = args.get("detail").and_then(Value::as_str) == Some("steps");
        let mut spec = StartRun::new(target, inputs, Trigger::Mcp);
        spec.stack = self.stack.clone();
        spec.parent = self.trace.parent.clone();
        spec.client = self.client_name();
        // Sampling (issue 17): the client answers its servers' sampling when it declared it.
        spec.sampler = super::sampling::forwarding(self.context);
        let (envelope, events) = self.watch(spec).await?;
        let mut answer = json!(envelope);
        if steps_detail {
            answer["steps"] = json!(step_records(&events));
        }
        match envelope.status {
            RunStatus::Succeeded | RunStatus::Partial => Ok(answer),
            _ => Err(answer),
        }
    }

    /// Starts a run, forwards its progress to the client, cancels it when the client
    /// cancels the call, and returns its envelope and recorded events. The run's
    /// questions go to the client when it can answer them (`people::Caller`); one it
    /// cannot ends the call with `INPUT_REQUIRED` (or `input_required`) while the run
    /// waits. A retry after `input_required` follows its run instead.
    pub(super) async fn watch(
        &self,
        mut spec: StartRun,
    ) -> Result<(mcpflow_engine::Envelope, Vec<mcpflow_engine::RunEvent>), Value> {
        if let Some(retry) = &self.retry {
            return self.resume(retry).await;
        }
        let reach = Reach::of(self.context);
        let (run_tx, run_rx) = watch::channel(None);
        let live = Arc::new(AtomicBool::new(true));
        spec.people = Some(Arc::new(Caller {
            peer: self.context.peer.clone(),
            origin: self.context.id.clone(),
            reach,
            live: live.clone(),
            run: run_rx,
            questions: self.app.open_questions(),
            parked: self.parked.clone(),
        }));
        let mut started = self.app.start_run(spec).map_err(|e| app_failure(&e))?;
        let run_id = started.run_id.clone();
        let _ = run_tx.send(Some(run_id.clone()));
        let events = self.app.subscribe(&run_id).ok();
        let progress = self.forward_progress(&mut started);
        let cancelled = self.context.ct.clone();
        let app = self.app.clone();
        let watch_id = run_id.clone();
        let watcher = tokio::spawn(async move {
            cancelled.cancelled().await;
            let _ = app.control(&watch_id, mcpflow_engine::Control::Cancel);
        });
        let settled = self.settle(&run_id, events, started.finish(), None).await;
        watcher.abort();
        let envelope = match settled {
            Settled::Finished(envelope) => *envelope,
            Settled::Waiting(questions) => {
                // The call returns; the run goes on waiting for answer_run.
                live.store(false, Ordering::Release);
                if let Some(p) = progress {
                    p.abort();
                }
                return Err(self.input_required(&run_id, &questions, reach));
            }
            Settled::Running => return Err(failure("INTERNAL", "the run was left unfollowed")),
        };
        if let Some(p) = progress {
            // The last notifications drain once the run's channel closes.
            let sent = tokio::time::timeout(std::time::Duration::from_secs(30), p).await;
            if matches!(sent, Ok(Ok(n)) if n > 0) {
                // The TypeScript SDK dispatches notifications on a microtask but
                // responses at once, and forgets a call's progress handler with its
                // response: a last notification read in the same chunk as the
                // response is dropped. A short gap lets it be read first.
                tokio::time::sleep(PROGRESS_SETTLE).await;
            }
        }
        let events = self.app.run_detail(&run_id).map(|d| d.events).unwrap_or_default();
        Ok((envelope, events))
    }

    /// Sends an MCP progress notification per finished top-level step, when the client
    /// asked for progress.
    fn forward_progress(&self, started: &mut mcpflow_app::runs::Started) -> Option<tokio::task::JoinHandle<u32>> {
        let token = self.context.meta.get_progress_token()?;
        let peer = self.context.peer.clone();
        // The starter's own receiver has every event from the first on (a fresh
        // subscription would miss the ones already sent).
        let (_, unused) = broadcast::channel(1);
        let mut events = std::mem::replace(&mut started.events, unused);
        let total = f64::from(started.steps);
        Some(tokio::spawn(async move {
            let mut done = 0u32;
            loop {
                let event = match events.recv().await {
                    Ok(e) => e,
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => break,
                };
                let message = match &event.kind {
                    EventKind::StepFinished { step, path, status, .. } if path.is_empty() => {
                        format!("step `{step}` {}", status.as_str())
                    }
                    EventKind::StepSkipped { step, path, .. } if path.is_empty() => format!("step `{step}` skipped"),
                    _ => continue,
                };
                done += 1;
                let params = ProgressNotificationParam::new(token.clone(), f64::from(done))
                    .with_total(total)
                    .with_message(message);
                if peer.notify_progress(params).await.is_err() {
                    break;
                }
            }
            done
        }))
    }

    async fn run_pipeline(&self, args: &Value) -> Answer {
        if self.stack.iter().any(|s| s == PIPELINE_ID) {
            return Err(failure(
                "PIPELINE_RECURSION",
                "run_pipeline was called from inside a pipeline; pipelines may not nest",
            ));
        }
        let downstream = self.app.pool().server_names();
        let prepared = pipeline::prepare(args.get("steps").unwrap_or(&Value::Null), &downstream).map_err(|e| {
            let mut v = failure(e.code(), e.to_string());
            if let PipelineError::Interpolation(d) = &e {
                v["error"]["diagnostics"] = json!(d);
            }
            v
        })?;
        let mut spec = StartRun::new(Target::Inline(prepared.blueprint.clone()), json!({}), Trigger::Mcp);
        spec.stack = self.stack.clone();
        spec.parent = self.trace.parent.clone();
        spec.client = self.client_name();
        // Sampling (issue 17): as in run_workflow.
        spec.sampler = super::sampling::forwarding(self.context);
        let (envelope, events) = self.watch(spec).await?;
        let report = pipeline::report(&prepared.ids, &events, &envelope);
        // A step failed without continue_on_error: the pipeline failed.
        if report.aborted { Err(json!(report)) } else { Ok(json!(report)) }
    }

    fn get_run(&self, args: &Value) -> Answer {
        let run_id = string_arg(args, "run_id")?;
        let detail = self.app.run_detail(&run_id).map_err(|e| app_failure(&e))?;
        let resumed_by = self.app.store().resumed_by(&run_id).ok().flatten();
        Ok(json!({
            "run_id": detail.record.id,
            "blueprint": detail.record.blueprint,
            "status": detail.record.status,
            "trigger": detail.record.trigger,
            "started_at": detail.record.started_at,
            "finished_at": detail.record.finished_at,
            "envelope": detail.record.envelope,
            "steps": step_records(&detail.events),
            "questions": self.open_questions(&run_id),
            "resumed_from": detail.record.resumed_from,
            "resumed_by": resumed_by,
        }))
    }
}
