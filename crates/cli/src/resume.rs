//! `mcpflow resume RUN`: go on with a run the process was killed in (`interrupted` in
//! `mcpflow runs`). The steps that finished keep their outputs, a step whose tool the
//! server ran as a task polls that same task instead of calling the tool again (or fails
//! with `TASK_LOST` when the server no longer knows it), and the rest runs. Recorded, with
//! the run it resumes.

use crate::app::{AppArgs, open_app_with};
use crate::run::{Watch, block_on, drive, folder_of};
use crate::validate::{read_json_input, unread};
use clap::Args;
use mcpflow_app::runs::Target;
use mcpflow_blueprint::limits::BLUEPRINT_SIZE;
use mcpflow_service::api::dto::Json;
use mcpflow_service::api::{Api, CliResume};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The interrupted run (`mcpflow runs` lists them).
    #[arg(value_name = "RUN")]
    run: String,
    /// The blueprint file to go on with; by default the document the run ran (kept with
    /// it), or for a run of a stored blueprint its current revision.
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
    #[command(flatten)]
    app: AppArgs,
    #[command(flatten)]
    out: Watch,
}

pub fn run(args: ResumeArgs) -> ExitCode {
    if let Some(code) = args.out.conflict() {
        return code;
    }
    block_on(execute(&args))
}

#[allow(clippy::print_stderr)]
async fn execute(args: &ResumeArgs) -> anyhow::Result<ExitCode> {
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
    let mut start = match app.resume_plan(&args.run, doc.map(Target::Inline)) {
        Ok(start) => start,
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            app.shutdown().await;
            return Ok(ExitCode::from(2));
        }
    };
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

/// The resume asked of the data folder's service, which holds the store.
#[allow(clippy::print_stderr)]
async fn through_service(api: &Api, args: &ResumeArgs, doc: Option<Value>) -> anyhow::Result<ExitCode> {
    if let Some(e) = crate::through::options_refused(&args.app) {
        eprintln!("error[{}]: {}", e.code, e.message);
        return Ok(ExitCode::from(2));
    }
    let total = crate::through::steps_of(api, &args.run, doc.as_ref()).await;
    let request = CliResume { run_id: args.run.clone(), doc: doc.map(Json), timeout_ms: args.out.timeout_ms() };
    let (started, events) = match api.resume_cli(request).await {
        Ok(started) => started,
        Err(e) => {
            eprintln!("error[{}]: {}", e.code, e.message);
            return Ok(ExitCode::from(2));
        }
    };
    crate::through::follow(api, &started.run_id, events, total, &args.out).await
}
