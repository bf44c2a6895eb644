//! The one client interface of the studio: the use cases it calls, answered either in
//! this process ([`Local`]) or by the `mcpflow service` that owns the data folder
//! ([`Remote`], over the folder's endpoint). The studio's Tauri commands call [`Api`]
//! and do not know which; the service answers a remote call with the same [`Local`]
//! code ([`dispatch`]), so both transports give the same answers and errors.
//!
//! The methods are listed once, in [`api!`]: each becomes a method of [`Api`] and a
//! JSON-RPC method of the service's `api` session of the same name, whose params are
//! the method's arguments by name. The runs whose events stream back (`start_run`,
//! `rerun_step`, `answer_and_follow`, `follow_run`) answer [`dto::RunStarted`]; their
//! events then arrive as `run/events` notifications on the same connection
//! (`{run_id, batch}`), the last batch marked `done`.

pub mod dto;
mod journal;
mod local;
mod logins;
mod remote;

pub use local::{CliAnswer, CliRerun, CliResume, CliRun, EventStream, LOGIN_TIMEOUT, Local};
pub use remote::{Remote, Status, Target};

use dto::{
    AnswerDto, AuthStatusDto, BlueprintInfo, CommandError, DiagnosticDto, Json, OpenedBlueprint, QuestionDto,
    RerunMode, RunAction, RunDetailDto, RunInfo, RunStarted, SamplingProviderDto, SamplingSettingsDto, SaveResult,
    SavedTestDto, ServerDto, ServerOffer, ServerTestDto, SignedOutDto, TelemetryConfigDto, TelemetrySettingsDto,
    TemplatePreviewDto, TestDto, TestListDto, WaitingRunDto,
};
use mcpflow_app::portable::Portable;
use serde_json::Value;

type Result<T> = std::result::Result<T, CommandError>;

/// Where the use cases are answered.
#[derive(Debug, Clone)]
pub enum Api {
    /// In this process, which holds the store.
    Local(Local),
    /// By the service holding the data folder.
    Remote(Remote),
}

fn bad_params(method: &str, e: &serde_json::Error) -> CommandError {
    CommandError::new("BAD_REQUEST", format!("{method}: the params do not fit: {e}"))
}

fn encode<T: serde::Serialize>(value: &T) -> Result<Value> {
    serde_json::to_value(value).map_err(|e| CommandError::new("INTERNAL", format!("an answer did not encode: {e}")))
}

/// Lists the plain use cases once: [`Api`]'s methods (each calls [`Local`] or the
/// service) and [`dispatch_plain`] (the service's side of the same calls).
macro_rules! api {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty; )*) => {
        impl Api {
            $(
                $(#[$doc])*
                pub async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                    match self {
                        Api::Local(local) => local.$name($($arg),*).await,
                        Api::Remote(remote) => {
                            #[allow(unused_mut)]
                            let mut params = serde_json::Map::new();
                            $( params.insert(stringify!($arg).to_owned(), encode(&$arg)?); )*
                            let value = remote.call(stringify!($name), Value::Object(params)).await?;
                            serde_json::from_value(value).map_err(|e| CommandError::new(
                                "SERVICE_MISMATCH",
                                format!(
                                    "the mcpflow service answered `{}` in a shape this studio does not read ({e}); \
                                     use the same version of mcpflow for both",
                                    stringify!($name)
                                ),
                            ))
                        }
                    }
                }
            )*
        }

        /// Answers a plain use case for a remote front door; `None` when `method` is
        /// not one.
        pub(crate) async fn dispatch_plain(local: &Local, method: &str, params: Value) -> Option<Result<Value>> {
            match method {
                $(
                    stringify!($name) => Some(async {
                        #[derive(serde::Deserialize)]
                        #[allow(dead_code)]
                        struct Params { $($arg: $ty),* }
                        let params = if params.is_null() { Value::Object(serde_json::Map::new()) } else { params };
                        let Params { $($arg),* } =
                            serde_json::from_value(params).map_err(|e| bad_params(method, &e))?;
                        encode(&local.$name($($arg),*).await?)
                    }.await),
                )*
                _ => None,
            }
        }
    };
}

api! {
    /// Runs an earlier start of the service (or this process) found running, now `interrupted`.
    fn interrupted() -> Vec<String>;
    fn list_blueprints() -> Vec<BlueprintInfo>;
    fn get_blueprint(id: String) -> OpenedBlueprint;
    /// Every diagnostic of a document being edited (errors and warnings).
    fn validate_blueprint(doc: Json) -> Vec<DiagnosticDto>;
    /// Saves a new revision; errors block (the error carries them), warnings come back.
    fn save_blueprint(doc: Json) -> SaveResult;
    fn delete_blueprint(id: String) -> ();
    fn list_servers() -> Vec<ServerDto>;
    /// Adds or replaces a server (an `mcpServers` entry). Starts nothing.
    fn put_server(name: String, config: Json) -> Vec<ServerDto>;
    /// Turns a server's switch "may ask the model" on or off.
    fn set_server_sampling(name: String, on: bool) -> Vec<ServerDto>;
    fn sampling_settings() -> SamplingSettingsDto;
    fn set_sampling_provider(provider: Option<SamplingProviderDto>) -> SamplingSettingsDto;
    /// The telemetry section of the data folder's `settings.json`, and what is in effect.
    fn telemetry_settings() -> TelemetrySettingsDto;
    /// Writes it (`None` removes it); the runs that start from now on use it.
    fn set_telemetry_settings(config: Option<TelemetryConfigDto>) -> TelemetrySettingsDto;
    fn delete_server(name: String) -> Vec<ServerDto>;
    /// Approves the exact command line the server starts; returns it.
    fn approve_server(name: String) -> String;
    /// Connects (starting the server if it is approved): its protocol revision and tools.
    fn test_server(name: String) -> ServerTestDto;
    /// What every configured server offers; unapproved ones stay stopped.
    fn server_offers() -> Vec<ServerOffer>;
    /// Remembers listings made elsewhere (`mcpflow_app::listings::Shipped`, as
    /// `demo/listings.json`) for configured servers never listed here; returns their names.
    fn remember_shipped_listings(doc: Json) -> Vec<String>;
    /// Adds every entry of an `mcpServers` document; starts and approves nothing.
    fn import_servers(doc: Json) -> Vec<String>;
    /// The document as it travels: the servers it uses copied in, what it calls beside.
    fn portable_document(doc: Json) -> Portable;
    fn auth_status() -> Vec<AuthStatusDto>;
    /// Signs in through the system browser and waits (up to five minutes) for the redirect.
    fn auth_login(server: String, doc: Option<Json>) -> AuthStatusDto;
    /// Stops waiting for the sign-in to `server`; true when one was waiting.
    fn auth_cancel(server: String) -> bool;
    fn auth_logout(server: String) -> SignedOutDto;
    /// The questions a run waits on; all runs' when `run_id` is `None`.
    fn questions(run_id: Option<String>) -> Vec<QuestionDto>;
    fn answer_question(run_id: String, question_id: String, answer: AnswerDto) -> ();
    /// The servers a run of the document calls, with whether each may start.
    fn run_servers(doc: Json) -> Vec<ServerDto>;
    fn approve_run_server(doc: Json, name: String) -> String;
    fn control_run(run_id: String, action: RunAction) -> ();
    fn set_breakpoints(run_id: String, steps: Vec<String>) -> ();
    /// The runs waiting for a person, in flight or left waiting.
    fn waiting_runs() -> Vec<WaitingRunDto>;
    /// Past runs of a blueprint, newest first.
    fn list_runs(blueprint: String, limit: u32) -> Vec<RunInfo>;
    /// One recorded run with all its events.
    fn get_run(run_id: String) -> RunDetailDto;
    /// Saves finished run `run_id` of `doc` (the document on the canvas) as a test of it,
    /// in the data folder's `tests/<id>/`; replayed once first, kept only when it passes.
    fn save_run_as_test(doc: Json, run_id: String) -> SavedTestDto;
    /// The tests of stored or unsaved blueprint `blueprint` (by id).
    fn blueprint_tests(blueprint: String) -> TestListDto;
    /// Runs every test of `doc`'s blueprint over its cassette, starting no server, with
    /// `doc` as the blueprint under test.
    fn run_blueprint_tests(doc: Json) -> Vec<TestDto>;
    /// Files the runs of a document never stored (`from`) under the id it was first saved as.
    fn move_runs(from: String, to: String) -> u32;
    /// A template's value against a scope (the last run's), or only its syntax checked.
    fn preview_template(template: Json, scope: Option<Json>) -> TemplatePreviewDto;
}

impl Api {
    /// Starts a run of the document on the canvas (saved or not); it pauses before each
    /// step in `breakpoints`, and `paused` starts it paused.
    pub async fn start_run(
        &self,
        doc: Json,
        inputs: Json,
        paused: bool,
        breakpoints: Vec<String>,
    ) -> Result<(RunStarted, EventStream)> {
        match self {
            Api::Local(local) => local.start_run(doc, inputs, paused, breakpoints),
            Api::Remote(remote) => {
                let params =
                    serde_json::json!({ "doc": doc, "inputs": inputs, "paused": paused, "breakpoints": breakpoints });
                remote.stream("start_run", params).await
            }
        }
    }

    /// Runs `step` of the document again, alone or with what follows, the other steps'
    /// outputs pinned from past run `run_id`.
    pub async fn rerun_step(
        &self,
        doc: Json,
        run_id: String,
        step: String,
        mode: RerunMode,
        paused: bool,
        breakpoints: Vec<String>,
    ) -> Result<(RunStarted, EventStream)> {
        match self {
            Api::Local(local) => local.rerun_step(doc, run_id, step, mode, paused, breakpoints),
            Api::Remote(remote) => {
                let params = serde_json::json!({ "doc": doc, "run_id": run_id, "step": step, "mode": mode,
                                                 "paused": paused, "breakpoints": breakpoints });
                remote.stream("rerun_step", params).await
            }
        }
    }

    /// Answers a run's open question and follows the run that goes on (the run itself,
    /// or the new run resuming one left waiting).
    pub async fn answer_and_follow(
        &self,
        doc: Json,
        run_id: String,
        question_id: String,
        answer: AnswerDto,
    ) -> Result<(RunStarted, EventStream)> {
        match self {
            Api::Local(local) => local.answer_and_follow(doc, run_id, question_id, answer),
            Api::Remote(remote) => {
                let params =
                    serde_json::json!({ "doc": doc, "run_id": run_id, "question_id": question_id, "answer": answer });
                remote.stream("answer_and_follow", params).await
            }
        }
    }

    /// Follows a run in flight that something else started; `RUN_NOT_ACTIVE` when it ended.
    pub async fn follow_run(&self, run_id: String) -> Result<(RunStarted, EventStream)> {
        match self {
            Api::Local(local) => local.follow_run(run_id),
            Api::Remote(remote) => remote.stream("follow_run", serde_json::json!({ "run_id": run_id })).await,
        }
    }

    /// `mcpflow run --store` (see [`Local::run_cli`]).
    pub async fn run_cli(&self, request: CliRun) -> Result<(RunStarted, EventStream)> {
        match self {
            Api::Local(local) => local.run_cli(request),
            Api::Remote(remote) => remote.stream("run_cli", encode(&request)?).await,
        }
    }

    /// `mcpflow answer` (see [`Local::answer_cli`]).
    pub async fn answer_cli(&self, request: CliAnswer) -> Result<(RunStarted, EventStream)> {
        match self {
            Api::Local(local) => local.answer_cli(request),
            Api::Remote(remote) => remote.stream("answer_cli", encode(&request)?).await,
        }
    }

    /// `mcpflow rerun` (see [`Local::rerun_cli`]).
    pub async fn rerun_cli(&self, request: CliRerun) -> Result<(RunStarted, EventStream)> {
        match self {
            Api::Local(local) => local.rerun_cli(request),
            Api::Remote(remote) => remote.stream("rerun_cli", encode(&request)?).await,
        }
    }

    /// `mcpflow resume` (see [`Local::resume_cli`]).
    pub async fn resume_cli(&self, request: CliResume) -> Result<(RunStarted, EventStream)> {
        match self {
            Api::Local(local) => local.resume_cli(request),
            Api::Remote(remote) => remote.stream("resume_cli", encode(&request)?).await,
        }
    }

    /// What changes in the data folder, whoever changes it. For a remote one, a
    /// reconnection reports `Blueprints` and `Servers` (things may have changed meanwhile).
    pub fn subscribe_changes(&self) -> tokio::sync::broadcast::Receiver<mcpflow_app::Change> {
        match self {
            Api::Local(local) => local.app.subscribe_changes(),
            Api::Remote(remote) => remote.subscribe_changes(),
        }
    }
}

/// Starts a streaming use case for a remote front door: `None` when `method` is not one.
pub(crate) fn dispatch_stream(local: &Local, method: &str, params: Value) -> Option<Result<(RunStarted, EventStream)>> {
    #[derive(serde::Deserialize)]
    struct Start {
        doc: Json,
        #[serde(default)]
        inputs: Json,
        #[serde(default)]
        paused: bool,
        #[serde(default)]
        breakpoints: Vec<String>,
    }
    #[derive(serde::Deserialize)]
    struct Rerun {
        doc: Json,
        run_id: String,
        step: String,
        mode: RerunMode,
        #[serde(default)]
        paused: bool,
        #[serde(default)]
        breakpoints: Vec<String>,
    }
    #[derive(serde::Deserialize)]
    struct AnswerFollow {
        doc: Json,
        run_id: String,
        question_id: String,
        answer: AnswerDto,
    }
    #[derive(serde::Deserialize)]
    struct Follow {
        run_id: String,
    }
    fn decode<T: serde::de::DeserializeOwned>(method: &str, params: Value) -> Result<T> {
        serde_json::from_value(params).map_err(|e| bad_params(method, &e))
    }
    let started = match method {
        "start_run" => {
            decode::<Start>(method, params).and_then(|p| local.start_run(p.doc, p.inputs, p.paused, p.breakpoints))
        }
        "rerun_step" => decode::<Rerun>(method, params)
            .and_then(|p| local.rerun_step(p.doc, p.run_id, p.step, p.mode, p.paused, p.breakpoints)),
        "answer_and_follow" => decode::<AnswerFollow>(method, params)
            .and_then(|p| local.answer_and_follow(p.doc, p.run_id, p.question_id, p.answer)),
        "follow_run" => decode::<Follow>(method, params).and_then(|p| local.follow_run(p.run_id)),
        "run_cli" => decode::<CliRun>(method, params).and_then(|p| local.run_cli(p)),
        "rerun_cli" => decode::<CliRerun>(method, params).and_then(|p| local.rerun_cli(p)),
        "resume_cli" => decode::<CliResume>(method, params).and_then(|p| local.resume_cli(p)),
        "answer_cli" => decode::<CliAnswer>(method, params).and_then(|p| local.answer_cli(p)),
        _ => return None,
    };
    Some(started)
}
