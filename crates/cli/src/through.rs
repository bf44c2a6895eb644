//! `mcpflow run --store` and `mcpflow rerun` while the data folder's service holds the
//! store: the run is asked of the service (`run_cli`, `rerun_cli` of
//! `mcpflow_service::api`) and watched from here as if it ran here — its events on the same
//! sink (progress, `--events`), Ctrl-C cancels it there, and the envelope is read from
//! its record when it ends. A run that asks a person gets the `--answers` file's answers;
//! with `--wait` one nobody answers waits in the service (the studio, or `mcpflow
//! answer`, answers it).

use crate::app::AppArgs;
use mcpflow_engine::{Envelope, EventSink, RunEvent};
use mcpflow_service::api::dto::{CommandError, RunAction};
use mcpflow_service::api::{Api, EventStream, Remote};
use tokio_util::sync::CancellationToken;

/// The service of the data folder, when one answers (it is not started for this: with
/// none, the command opens the store itself). Never with `--db`: the store is then the
/// database's, not the folder's.
pub(crate) async fn service() -> Option<Api> {
    if crate::app::database().is_some() {
        return None;
    }
    Remote::connect(&mcpflow_app::home::data_dir(), "cli", None).await.ok().map(Api::Remote)
}

/// The refusal of options only a process of its own could honour (`--servers`,
/// `--allow-*`) while a service holds the store, as `serve`'s.
pub(crate) fn options_refused(app: &AppArgs) -> Option<CommandError> {
    let mut options = Vec::new();
    if !app.servers.is_empty() {
        options.push("--servers");
    }
    if !app.allow.is_empty() {
        options.push("--allow-server");
    }
    if app.allow_all_servers {
        options.push("--allow-all-servers");
    }
    if options.is_empty() {
        return None;
    }
    Some(CommandError::new(
        "SERVICE_OPTIONS_DIFFER",
        format!(
            "the mcpflow service holds this data folder and runs with its own servers and approvals; {} cannot \
             change them for one run. Configure the servers in the studio's Servers panel (or `mcpflow import`), run \
             without --store (nothing is recorded), or stop the service first",
            options.join(", ")
        ),
    ))
}

/// Follows a run the service started for this command as if it ran here: its events on
/// `out`'s sink (progress, `--events`), Ctrl-C cancels it there, and its end is printed
/// as `run` prints it. `total`: its top-level steps, for the progress.
#[allow(clippy::print_stderr)]
pub(crate) async fn follow(
    api: &Api,
    run_id: &str,
    events: EventStream,
    total: u64,
    out: &crate::run::Watch,
) -> anyhow::Result<std::process::ExitCode> {
    let (sink, writer) = out.sink(total)?;
    let stop = crate::run::cancel_on_signals()?;
    match watch(api, run_id, events, &sink, stop.token()).await {
        Ok(envelope) => out.finish(&envelope, writer.as_ref(), stop.signal()),
        Err(e) => {
            eprintln!("error[{}]: {}", e.code, e.message);
            Ok(std::process::ExitCode::from(2))
        }
    }
}

/// The top-level steps of the blueprint a command runs: `doc` when given, else the
/// stored blueprint that past run `run_id` was of (0 when it cannot be read).
pub(crate) async fn steps_of(api: &Api, run_id: &str, doc: Option<&serde_json::Value>) -> u64 {
    use crate::run::top_level;
    match doc {
        Some(doc) => top_level(doc),
        None => match api.get_run(run_id.to_owned()).await {
            Ok(run) => api.get_blueprint(run.info.blueprint).await.map_or(0, |b| top_level(&b.doc.0)),
            Err(_) => 0,
        },
    }
}

/// Watches a run the service started until it ends: events to `sink`, `cancel` cancels
/// it there; its envelope, from its record.
pub(crate) async fn watch(
    api: &Api,
    run_id: &str,
    mut events: EventStream,
    sink: &EventSink,
    cancel: &CancellationToken,
) -> Result<Envelope, CommandError> {
    let mut cancelled = false;
    loop {
        let batch = tokio::select! {
            batch = events.next_batch() => batch,
            () = cancel.cancelled(), if !cancelled => {
                cancelled = true;
                api.control_run(run_id.to_owned(), RunAction::Cancel).await?;
                continue;
            }
        };
        let Some(batch) = batch else { break };
        for event in batch.events.0.as_array().into_iter().flatten() {
            if let Ok(event) = serde_json::from_value::<RunEvent>(event.clone()) {
                sink(&event);
            }
        }
    }
    let detail = api.get_run(run_id.to_owned()).await?;
    let envelope = detail.envelope.ok_or_else(|| {
        CommandError::new(
            "SERVICE_UNAVAILABLE",
            format!(
                "run {run_id} has no result: the mcpflow service stopped before it ended (it is `{}` now; `mcpflow show \
                 {run_id}` shows it)",
                detail.info.status
            ),
        )
    })?;
    serde_json::from_value(envelope.0).map_err(|e| {
        CommandError::new("SERVICE_MISMATCH", format!("the service's envelope of run {run_id} does not read: {e}"))
    })
}
