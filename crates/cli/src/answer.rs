//! `mcpflow answer RUN STEP --answers FILE`: answer the question a run left `waiting`
//! asks at STEP (its process stopped or died while it waited; `mcpflow runs --waiting`
//! lists them), and resume the run with that answer. The answers file is `mcpflow run
//! --answers`' (a JSON object keyed by step id); its other entries answer the resumed
//! run's later questions.

use crate::app::{AppArgs, open_app_with};
use crate::run::{PeopleArgs, Watch, block_on, drive, folder_of, say_when_waiting};
use crate::validate::{read_json_input, unread};
use clap::Args;
use mcpflow_app::runs::Target;
use mcpflow_blueprint::limits::BLUEPRINT_SIZE;
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// The waiting run.
    #[arg(value_name = "RUN")]
    run: String,
    /// The step whose question is answered.
    #[arg(value_name = "STEP")]
    step: String,
    #[command(flatten)]
    people: PeopleArgs,
    /// The blueprint file to go on with; by default the document the run ran (kept with
    /// it), or for a run of a stored blueprint its current revision.
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
    /// A later question nobody here can answer waits again (as `run --wait`) instead of
    /// failing with INPUT_REQUIRED.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    app: AppArgs,
    #[command(flatten)]
    out: Watch,
}

pub fn run(args: AnswerArgs) -> ExitCode {
    if let Some(code) = args.out.conflict() {
        return code;
    }
    block_on(execute(&args))
}

#[allow(clippy::print_stderr)]
async fn execute(args: &AnswerArgs) -> anyhow::Result<ExitCode> {
    let Some(file) = args.people.file() else {
        eprintln!("error: say the answer with `--answers FILE` (a JSON object keyed by step id)");
        return Ok(ExitCode::from(2));
    };
    let people = match args.people.people() {
        Ok(p) => p,
        Err(message) => return Ok(unread(&message)),
    };
    let doc = match &args.file {
        Some(file) => match read_json_input(file, &BLUEPRINT_SIZE) {
            Ok(doc) => Some(doc),
            Err(message) => return Ok(unread(&message)),
        },
        None => None,
    };
    if let Some(api) = crate::through::service().await {
        return through_service(&api, args, file, doc).await;
    }
    let app = open_app_with(&args.app, None, args.file.as_deref().and_then(folder_of))?;
    let refused = |e: mcpflow_app::AppError| {
        eprintln!("error[{}]: {e}", e.code());
        ExitCode::from(2)
    };
    let question = match app.waiting_question(&args.run, &args.step) {
        Ok(q) => q,
        Err(e) => return Ok(refused(e)),
    };
    let answer = match people.answers.as_ref().and_then(|a| a.answer(&question)) {
        Some(Ok(answer)) => answer,
        Some(Err(e)) => {
            eprintln!("error[{}]: {}", e.code, e.message);
            return Ok(ExitCode::from(2));
        }
        None => {
            eprintln!(
                "error[INPUT_REQUIRED]: {} has no answer for step `{}` ({}); add {{\"{}\": …}}",
                file.display(),
                args.step,
                question.message,
                args.step
            );
            return Ok(ExitCode::from(2));
        }
    };
    let mut start = match app.answer_plan(&args.run, &question, answer, doc.map(Target::Inline), Some(Arc::new(people)))
    {
        Ok(start) => start,
        Err(e) => return Ok(refused(e)),
    };
    start.wait = args.wait;
    start.timeout_ms = args.out.timeout_ms();
    let total = crate::run::steps_of_target(&app, &start.target);
    let (sink, writer) = args.out.sink(total)?;
    let sink = match (&start.people, args.wait) {
        (Some(people), true) => {
            let (sink, people) = say_when_waiting(sink, people.clone());
            start.people = Some(people);
            sink
        }
        _ => sink,
    };
    let stop = crate::run::cancel_on_signals()?;
    let envelope = match drive(&app, start, sink, stop.token().clone()).await {
        Ok(envelope) => envelope,
        Err(e) => return Ok(refused(e)),
    };
    args.out.finish(&envelope, writer.as_ref(), stop.signal())
}

/// The answer given to the data folder's service, where the run waits (in flight, or
/// left waiting by an earlier process); its events are shown here until it ends.
#[allow(clippy::print_stderr)]
async fn through_service(
    api: &mcpflow_service::api::Api,
    args: &AnswerArgs,
    file: &std::path::Path,
    doc: Option<Value>,
) -> anyhow::Result<ExitCode> {
    let refused = |e: mcpflow_service::api::dto::CommandError| {
        eprintln!("error[{}]: {}", e.code, e.message);
        Ok(ExitCode::from(2))
    };
    if let Some(e) = crate::through::options_refused(&args.app) {
        return refused(e);
    }
    let answers = match read_json_input(file, &mcpflow_blueprint::limits::ANSWERS_FILE_SIZE) {
        Ok(answers) => answers,
        Err(message) => return Ok(unread(&message)),
    };
    let total = doc.as_ref().map_or(0, crate::run::top_level);
    let request = mcpflow_service::api::CliAnswer {
        run_id: args.run.clone(),
        step: args.step.clone(),
        answers,
        answers_file: Some(file.display().to_string()),
        doc: doc.map(mcpflow_service::api::dto::Json),
    };
    let (started, events) = match api.answer_cli(request).await {
        Ok(started) => started,
        Err(e) => return refused(e),
    };
    let (sink, writer) = args.out.sink(total)?;
    let stop = crate::run::cancel_on_signals()?;
    match crate::through::watch(api, &started.run_id, events, &sink, stop.token()).await {
        Ok(envelope) => args.out.finish(&envelope, writer.as_ref(), stop.signal()),
        Err(e) => refused(e),
    }
}
