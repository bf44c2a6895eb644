//! `mcpflow rerun RUN STEP`: run a step of a recorded run again — alone, or with every
//! step after it (`--from-here`) — with the other steps pinned to that run's outputs and
//! its inputs (the studio's "Run this step" / "Run from here", headless). The re-run is
//! recorded, with the run it came from.

use crate::app::{AppArgs, open_app_with};
use crate::run::{Watch, block_on, drive, folder_of};
use crate::validate::{read_json_input, unread};
use clap::Args;
use mcpflow_app::runs::{Rerun, Target, Trigger};
use mcpflow_blueprint::limits::BLUEPRINT_SIZE;
use mcpflow_service::api::dto::Json;
use mcpflow_service::api::{Api, CliRerun};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct RerunArgs {
    /// The recorded run (`mcpflow runs` lists them).
    #[arg(value_name = "RUN")]
    run: String,
    /// The top-level step to run again.
    #[arg(value_name = "STEP")]
    step: String,
    /// Run the step and every step after it (default: the step alone).
    #[arg(long)]
    from_here: bool,
    /// The blueprint file to run (say, with the failing step fixed). Needed when the run
    /// was of a file (`mcpflow run --store FILE`); by default a run of a stored blueprint
    /// re-runs its current revision.
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
    #[command(flatten)]
    app: AppArgs,
    #[command(flatten)]
    out: Watch,
}

pub fn run(args: RerunArgs) -> ExitCode {
    if let Some(code) = args.out.conflict() {
        return code;
    }
    block_on(execute(&args))
}

#[allow(clippy::print_stderr)]
async fn execute(args: &RerunArgs) -> anyhow::Result<ExitCode> {
    // The file first: a file that cannot be read opens nothing.
    let doc = match &args.file {
        Some(file) => match read_json_input(file, &BLUEPRINT_SIZE) {
            Ok(doc) => Some(doc),
            Err(message) => return Ok(unread(&message)),
        },
        None => None,
    };
    if let Some(api) = crate::through::service().await {
        return through_service(&api, args, doc).await;
    }
    let app = open_app_with(&args.app, None, args.file.as_deref().and_then(folder_of))?;
    let mode = if args.from_here { Rerun::FromHere } else { Rerun::Step };
    let plan = match doc {
        Some(doc) => app.rerun_plan_on(&args.run, Target::Inline(doc), &args.step, mode),
        None => app.rerun_plan(&args.run, &args.step, mode),
    };
    let mut start = match plan {
        Ok(start) => start,
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            app.shutdown().await;
            return Ok(ExitCode::from(2));
        }
    };
    start.trigger = Trigger::Cli;
    start.timeout_ms = args.out.timeout_ms();
    let total = crate::run::steps_of_target(&app, &start.target);
    let (sink, writer) = args.out.sink(total)?;
    let stop = crate::run::cancel_on_signals()?;
    let envelope = match drive(&app, start, sink, stop.token().clone()).await {
        Ok(envelope) => envelope,
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            return Ok(ExitCode::from(2));
        }
    };
    args.out.finish(&envelope, writer.as_ref(), stop.signal())
}

/// The re-run asked of the data folder's service, which holds the store.
#[allow(clippy::print_stderr)]
async fn through_service(api: &Api, args: &RerunArgs, doc: Option<Value>) -> anyhow::Result<ExitCode> {
    if let Some(e) = crate::through::options_refused(&args.app) {
        eprintln!("error[{}]: {}", e.code, e.message);
        return Ok(ExitCode::from(2));
    }
    let total = crate::through::steps_of(api, &args.run, doc.as_ref()).await;
    let request = CliRerun {
        run_id: args.run.clone(),
        step: args.step.clone(),
        from_here: args.from_here,
        doc: doc.map(Json),
        timeout_ms: args.out.timeout_ms(),
    };
    let (started, events) = match api.rerun_cli(request).await {
        Ok(started) => started,
        Err(e) => {
            eprintln!("error[{}]: {}", e.code, e.message);
            return Ok(ExitCode::from(2));
        }
    };
    crate::through::follow(api, &started.run_id, events, total, &args.out).await
}
