//! The lifecycle tools: `list_runs` (by blueprint, status, waiting), `cancel_run`,
//! `resume_run` (an interrupted run, its finished steps kept) and `delete_workflow`
//! (refused while a run of it is in flight; its runs' history stays, as in the studio).

use super::call::{Call, app_failure, failure, string_arg};
use super::people::describe;
use super::waiting::{ANSWER_WAIT, finished};
use mcpflow_app::runs::Trigger;
use serde_json::{Value, json};

/// How many runs `list_runs` answers when `limit` is left out.
const LIST_RUNS: usize = 20;

impl Call<'_> {
    /// `list_runs`: recorded runs, newest first, one line each; the waiting ones with
    /// their questions.
    pub(super) fn list_runs(&self, args: &Value) -> Result<Value, Value> {
        let blueprint = args.get("blueprint").and_then(Value::as_str);
        let status = args.get("status").and_then(Value::as_str);
        let waiting = args.get("waiting").and_then(Value::as_bool) == Some(true);
        let limit = args.get("limit").and_then(Value::as_u64).map_or(LIST_RUNS, |n| n as usize);
        // Filtered after reading: read enough to fill `limit` in the usual case.
        let filtered = status.is_some() || waiting;
        let read = if filtered { limit.saturating_mul(50).max(1_000) } else { limit };
        let records = self.app.runs(blueprint, read).map_err(|e| app_failure(&e))?;
        let runs: Vec<Value> = records
            .into_iter()
            .filter(|r| status.is_none_or(|s| r.status.as_str() == s))
            .filter(|r| !waiting || r.status.as_str() == "waiting")
            .take(limit)
            .map(|r| {
                let mut line = json!({
                    "run_id": r.id,
                    "blueprint": r.blueprint,
                    "status": r.status.as_str(),
                    "started_at": r.started_at,
                    "finished_at": r.finished_at,
                });
                if let Some(from) = &r.resumed_from {
                    line["resumed_from"] = json!(from);
                }
                if r.status.as_str() == "waiting" {
                    let questions: Vec<Value> =
                        self.app.questions(Some(&r.id)).iter().map(|(run, q)| describe(run, q)).collect();
                    line["questions"] = json!(questions);
                }
                line
            })
            .collect();
        Ok(json!({ "runs": runs }))
    }

    /// `cancel_run`: cancels a run in flight (and waits a little for its end) or one an
    /// earlier process left waiting.
    pub(super) async fn cancel_run(&self, args: &Value) -> Result<Value, Value> {
        let run_id = string_arg(args, "run_id")?;
        // Subscribed first: the end is not missed.
        let events = self.app.subscribe(&run_id).ok();
        let in_flight = self.app.cancel_run(&run_id).map_err(|e| {
            let mut v = app_failure(&e);
            if e.code() == "RUN_NOT_ACTIVE" {
                v["error"]["message"] = json!(format!(
                    "run `{run_id}` is not running or waiting (it finished); get_run shows how it ended"
                ));
            }
            v
        })?;
        if in_flight && let Some(mut events) = events {
            // Its channel closes when it has ended and been recorded.
            let _ = tokio::time::timeout(ANSWER_WAIT, async {
                while !matches!(events.recv().await, Err(tokio::sync::broadcast::error::RecvError::Closed)) {}
            })
            .await;
        }
        let record = self.app.store().run(&run_id).ok().flatten();
        Ok(json!({
            "run_id": run_id,
            "status": record.as_ref().map_or("cancelling", |r| r.status.as_str()),
        }))
    }

    /// `resume_run`: a run whose process died (`interrupted`) resumed by a new run, its
    /// finished steps kept; followed as `run_workflow` follows a run.
    pub(super) async fn resume_run(&self, args: &Value) -> Result<Value, Value> {
        let run_id = string_arg(args, "run_id")?;
        let mut spec = self.app.resume_plan(&run_id, None).map_err(|e| app_failure(&e))?;
        spec.trigger = Trigger::Mcp;
        spec.stack = self.stack.clone();
        spec.client = self.client_name();
        let (envelope, _) = self.watch(spec).await?;
        let mut reply = finished(envelope);
        match &mut reply {
            Ok(v) | Err(v) => v["resumed_from"] = json!(run_id),
        }
        reply
    }

    /// `delete_workflow`: removes a stored blueprint and its revisions; its runs stay.
    pub(super) fn delete_workflow(&self, args: &Value) -> Result<Value, Value> {
        let id = string_arg(args, "id")?;
        let running: Vec<String> =
            self.app.active_runs().into_iter().filter(|(_, bp)| *bp == id).map(|(run, _)| run).collect();
        if !running.is_empty() {
            return Err(failure(
                "BLUEPRINT_IN_USE",
                format!(
                    "blueprint `{id}` has {} run(s) in flight ({}); cancel them with cancel_run (or let them finish), then delete it",
                    running.len(),
                    running.join(", ")
                ),
            ));
        }
        self.app.delete_blueprint(&id).map_err(|e| app_failure(&e))?;
        Ok(json!({ "id": id, "deleted": true }))
    }
}
