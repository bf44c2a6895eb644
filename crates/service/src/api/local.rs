//! The use cases as the studio calls them, answered in this process: each takes the
//! window's arguments, calls the application and returns what the window sees
//! ([`super::dto`]). The same code answers a remote studio's request in the service
//! ([`super::dispatch`]), so both transports give the same answers.

use super::dto::{
    AnswerDto, AuthStatusDto, BlueprintInfo, CommandError, DiagnosticDto, EventBatch, Json, OpenedBlueprint,
    QuestionDto, RerunMode, RunAction, RunDetailDto, RunInfo, RunStarted, SamplingProviderDto, SamplingSettingsDto,
    SaveResult, SavedTestDto, ServerDto, ServerOffer, ServerTestDto, SignedOutDto, TelemetryConfigDto,
    TelemetrySettingsDto, TemplatePreviewDto, TestDto, TestListDto, WaitingRunDto,
};
use super::logins::Logins;
use mcpflow_app::App;
use mcpflow_app::portable::Portable;
use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_engine::{Control, RunEvent};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};

type Result<T> = std::result::Result<T, CommandError>;

/// How long a browser sign-in waits for the redirect before it gives up (`AUTH_TIMEOUT`).
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The application, and the browser sign-ins it is waiting on.
#[derive(Debug, Clone)]
pub struct Local {
    pub app: App,
    logins: Arc<Logins>,
}

impl Local {
    pub fn new(app: App) -> Self {
        Local { app, logins: Arc::new(Logins::default()) }
    }

    /// Stops every sign-in still waiting (the front door is closing).
    pub fn abort_logins(&self) {
        self.logins.abort_all();
    }

    pub async fn interrupted(&self) -> Result<Vec<String>> {
        Ok(self.app.interrupted().to_vec())
    }

    pub async fn list_blueprints(&self) -> Result<Vec<BlueprintInfo>> {
        Ok(self.app.blueprints()?.into_iter().map(BlueprintInfo::from).collect())
    }

    pub async fn get_blueprint(&self, id: String) -> Result<OpenedBlueprint> {
        let stored = self.app.blueprint(&id)?;
        Ok(OpenedBlueprint { info: stored.meta.into(), doc: Json(stored.json) })
    }

    pub async fn validate_blueprint(&self, doc: Json) -> Result<Vec<DiagnosticDto>> {
        Ok(self.app.validate(&doc.0).diagnostics.iter().map(DiagnosticDto::from).collect())
    }

    pub async fn save_blueprint(&self, doc: Json) -> Result<SaveResult> {
        let saved = self.app.save_blueprint(&doc.0)?;
        Ok(SaveResult { info: saved.meta.into(), warnings: saved.warnings.iter().map(DiagnosticDto::from).collect() })
    }

    pub async fn delete_blueprint(&self, id: String) -> Result<()> {
        Ok(self.app.delete_blueprint(&id)?)
    }

    pub async fn list_servers(&self) -> Result<Vec<ServerDto>> {
        Ok(self.servers())
    }

    fn servers(&self) -> Vec<ServerDto> {
        self.app.servers().into_iter().map(ServerDto::from).collect()
    }

    pub async fn put_server(&self, name: String, config: Json) -> Result<Vec<ServerDto>> {
        self.app.put_server(&name, &config.0)?;
        Ok(self.servers())
    }

    pub async fn set_server_sampling(&self, name: String, on: bool) -> Result<Vec<ServerDto>> {
        self.app.set_server_sampling(&name, on)?;
        Ok(self.servers())
    }

    pub async fn sampling_settings(&self) -> Result<SamplingSettingsDto> {
        Ok(self.app.sampling_settings().into())
    }

    pub async fn set_sampling_provider(&self, provider: Option<SamplingProviderDto>) -> Result<SamplingSettingsDto> {
        let config = provider.map(mcpflow_app::sampling::ProviderConfig::from);
        Ok(self.app.set_sampling_provider(config.as_ref())?.into())
    }

    pub async fn telemetry_settings(&self) -> Result<TelemetrySettingsDto> {
        Ok(self.app.telemetry_settings().into())
    }

    pub async fn set_telemetry_settings(&self, config: Option<TelemetryConfigDto>) -> Result<TelemetrySettingsDto> {
        let settings =
            config.map(TelemetryConfigDto::settings).transpose().map_err(mcpflow_app::AppError::BadRequest)?;
        Ok(self.app.set_telemetry_settings(settings.as_ref())?.into())
    }

    pub async fn delete_server(&self, name: String) -> Result<Vec<ServerDto>> {
        self.app.delete_server(&name)?;
        Ok(self.servers())
    }

    pub async fn approve_server(&self, name: String) -> Result<String> {
        Ok(self.app.approve_server(&name)?)
    }

    pub async fn test_server(&self, name: String) -> Result<ServerTestDto> {
        Ok(self.app.test_connection(&name).await?.into())
    }

    pub async fn remember_shipped_listings(&self, doc: Json) -> Result<Vec<String>> {
        let shipped: mcpflow_app::listings::Shipped = serde_json::from_value(doc.0)
            .map_err(|e| CommandError::new("BAD_REQUEST", format!("not a document of shipped listings: {e}")))?;
        Ok(self.app.remember_shipped(&shipped))
    }

    pub async fn server_offers(&self) -> Result<Vec<ServerOffer>> {
        let app = self.app.clone();
        let servers = app.servers();
        // Servers start concurrently; each answers within the pool's own timeouts.
        let found = futures::future::join_all(servers.iter().map(|server| {
            let app = app.clone();
            let name = server.name.clone();
            let approved = server.approved;
            let command = server.command.clone().unwrap_or_default();
            async move {
                if !approved {
                    let error = CommandError::new(
                        "SERVER_NOT_APPROVED",
                        format!(
                            "`{name}` starts `{command}`, which nobody approved yet; approve it with Approve… on a step that calls it, in the palette or in the Servers panel"
                        ),
                    );
                    return ServerOffer::failed(&name, error, app.last_listing(&name));
                }
                match app.offer(&name).await {
                    Ok(offer) => ServerOffer::from_offer(&name, offer),
                    Err(e) => ServerOffer::failed(&name, e.into(), app.last_listing(&name)),
                }
            }
        }))
        .await;
        Ok(found)
    }

    pub async fn import_servers(&self, doc: Json) -> Result<Vec<String>> {
        Ok(self.app.import_servers(&doc.0)?)
    }

    pub async fn portable_document(&self, doc: Json) -> Result<Portable> {
        Ok(self.app.portable_document(doc.0)?)
    }

    pub async fn auth_status(&self) -> Result<Vec<AuthStatusDto>> {
        Ok(self.app.auth_status().await?.into_iter().map(AuthStatusDto::from).collect())
    }

    pub async fn auth_login(&self, server: String, doc: Option<Json>) -> Result<AuthStatusDto> {
        let app = self.app.clone();
        let name = server.clone();
        let options = mcpflow_app::auth::LoginOptions { timeout: LOGIN_TIMEOUT, ..Default::default() };
        let login =
            async move { app.auth_login(doc.as_ref().map(|d| &d.0), &name, options).await.map(AuthStatusDto::from) };
        self.logins.run(&server, login).await
    }

    pub async fn auth_cancel(&self, server: String) -> Result<bool> {
        Ok(self.logins.cancel(&server))
    }

    pub async fn auth_logout(&self, server: String) -> Result<SignedOutDto> {
        Ok(self.app.auth_logout(&server).await?.into())
    }

    pub async fn questions(&self, run_id: Option<String>) -> Result<Vec<QuestionDto>> {
        Ok(self.app.questions(run_id.as_deref()).into_iter().map(|(run, q)| QuestionDto::new(run, q)).collect())
    }

    pub async fn answer_question(&self, run_id: String, question_id: String, answer: AnswerDto) -> Result<()> {
        Ok(self.app.answer(&run_id, &question_id, answer.into())?)
    }

    pub async fn run_servers(&self, doc: Json) -> Result<Vec<ServerDto>> {
        Ok(self.app.run_servers(&doc.0)?.into_iter().map(ServerDto::from).collect())
    }

    pub async fn approve_run_server(&self, doc: Json, name: String) -> Result<String> {
        Ok(self.app.approve_run_server(&doc.0, &name)?)
    }

    pub async fn control_run(&self, run_id: String, action: RunAction) -> Result<()> {
        let control = match action {
            RunAction::Pause => Control::Pause,
            RunAction::Resume => Control::Resume,
            RunAction::Step => Control::Step,
            RunAction::Cancel => Control::Cancel,
        };
        Ok(self.app.control(&run_id, control)?)
    }

    pub async fn set_breakpoints(&self, run_id: String, steps: Vec<String>) -> Result<()> {
        Ok(self.app.control(&run_id, Control::SetBreakpoints(steps))?)
    }

    pub async fn waiting_runs(&self) -> Result<Vec<WaitingRunDto>> {
        Ok(self
            .app
            .waiting()
            .into_iter()
            .map(|w| {
                let run_id = w.record.id.clone();
                WaitingRunDto {
                    run: w.record.into(),
                    questions: w.questions.into_iter().map(|q| QuestionDto::new(run_id.clone(), q)).collect(),
                    in_flight: w.in_flight,
                }
            })
            .collect())
    }

    pub async fn list_runs(&self, blueprint: String, limit: u32) -> Result<Vec<RunInfo>> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX).clamp(1, 1000);
        Ok(self.app.runs(Some(&blueprint), limit)?.into_iter().map(RunInfo::from).collect())
    }

    pub async fn move_runs(&self, from: String, to: String) -> Result<u32> {
        Ok(self.app.move_runs(&from, &to)?)
    }

    pub async fn preview_template(&self, template: Json, scope: Option<Json>) -> Result<TemplatePreviewDto> {
        Ok(mcpflow_app::preview::preview(&template.0, scope.as_ref().map(|s| &s.0)).into())
    }

    pub async fn get_run(&self, run_id: String) -> Result<RunDetailDto> {
        let detail = self.app.run_detail(&run_id)?;
        let events = serde_json::to_value(&detail.events).map_err(|e| CommandError::new("INTERNAL", e.to_string()))?;
        let envelope = detail.record.envelope.as_ref().and_then(|e| serde_json::to_value(e).ok()).map(Json);
        let inputs = Json(detail.record.inputs.clone());
        let definition = match (&detail.record.definition, detail.record.blueprint_rev) {
            (Some(doc), _) => Some(Json(doc.clone())),
            (None, Some(rev)) => self.app.blueprint_revision(&detail.record.blueprint, rev).ok().map(|s| Json(s.json)),
            (None, None) => None,
        };
        Ok(RunDetailDto { info: detail.record.into(), inputs, events: Json(events), envelope, definition })
    }

    pub async fn save_run_as_test(&self, doc: Json, run_id: String) -> Result<SavedTestDto> {
        Ok(self.app.save_run_as_test(&doc.0, &run_id).await?.into())
    }

    pub async fn blueprint_tests(&self, blueprint: String) -> Result<TestListDto> {
        let folder = self.app.tests_folder(&blueprint)?.display().to_string();
        let tests = self.app.blueprint_tests(&blueprint)?;
        let tests = tests
            .into_iter()
            .map(|(name, file)| TestDto {
                name,
                file: file.display().to_string(),
                passed: None,
                failure: None,
                status: None,
            })
            .collect();
        Ok(TestListDto { folder, tests })
    }

    pub async fn run_blueprint_tests(&self, doc: Json) -> Result<Vec<TestDto>> {
        Ok(self.app.run_blueprint_tests(&doc.0).await?.into_iter().map(TestDto::from).collect())
    }

    // Runs whose events stream back: each returns the run and its events from now on.

    pub fn start_run(
        &self,
        doc: Json,
        inputs: Json,
        paused: bool,
        breakpoints: Vec<String>,
    ) -> Result<(RunStarted, EventStream)> {
        let inputs = if inputs.0.is_null() { serde_json::json!({}) } else { inputs.0 };
        let mut spec = StartRun::new(Target::Inline(doc.0), inputs, Trigger::Studio);
        spec.paused = paused;
        spec.breakpoints = breakpoints.into_iter().collect::<HashSet<_>>();
        self.start(spec)
    }

    pub fn rerun_step(
        &self,
        doc: Json,
        run_id: String,
        step: String,
        mode: RerunMode,
        paused: bool,
        breakpoints: Vec<String>,
    ) -> Result<(RunStarted, EventStream)> {
        let mut spec = self.app.rerun_plan_on(&run_id, Target::Inline(doc.0), &step, mode.into())?;
        spec.trigger = Trigger::Studio;
        spec.paused = paused;
        spec.breakpoints = breakpoints.into_iter().collect();
        self.start(spec)
    }

    fn start(&self, spec: StartRun) -> Result<(RunStarted, EventStream)> {
        let started = self.app.start_run(spec)?;
        let answer = RunStarted { run_id: started.run_id.clone(), blueprint: started.blueprint.clone() };
        // The run goes on by itself; its end reaches the stream as the last batch.
        drop(started.done);
        Ok((answer, EventStream::local(started.events)))
    }

    pub fn answer_and_follow(
        &self,
        doc: Json,
        run_id: String,
        question_id: String,
        answer: AnswerDto,
    ) -> Result<(RunStarted, EventStream)> {
        let answered = self.app.answer_and_follow(&run_id, &question_id, answer.into(), Some(Target::Inline(doc.0)))?;
        Ok((RunStarted { run_id: answered.run_id, blueprint: answered.blueprint }, EventStream::local(answered.events)))
    }

    /// `mcpflow run --store` through the service: the document run as the CLI's, with
    /// the answers of its `--answers` file (`answers_file`: its path, for messages) and no
    /// terminal; `wait` leaves a question nobody answers waiting instead of failing.
    pub fn run_cli(&self, request: CliRun) -> Result<(RunStarted, EventStream)> {
        let answers = match (request.answers, request.answers_file) {
            (Some(value), file) => Some(
                mcpflow_app::people::Answers::from_value(std::path::Path::new(&file.unwrap_or_default()), value)
                    .map_err(|m| CommandError::new("BAD_REQUEST", m))?,
            ),
            (None, _) => None,
        };
        let mut spec = StartRun::new(Target::Inline(request.doc.0), request.inputs.0, Trigger::Cli);
        spec.timeout_ms = request.timeout_ms;
        spec.people = Some(Arc::new(mcpflow_app::people::Headless::new(answers)) as _);
        spec.wait = request.wait;
        self.start(spec)
    }

    /// `mcpflow rerun` through the service: `step` of past run `run_id` again, on `doc`
    /// when given, else on the blueprint that run was of.
    pub fn rerun_cli(&self, request: CliRerun) -> Result<(RunStarted, EventStream)> {
        let mode = if request.from_here { mcpflow_app::runs::Rerun::FromHere } else { mcpflow_app::runs::Rerun::Step };
        let mut spec = match request.doc {
            Some(doc) => self.app.rerun_plan_on(&request.run_id, Target::Inline(doc.0), &request.step, mode)?,
            None => self.app.rerun_plan(&request.run_id, &request.step, mode)?,
        };
        spec.trigger = Trigger::Cli;
        spec.timeout_ms = request.timeout_ms;
        self.start(spec)
    }

    /// `mcpflow resume` through the service: interrupted run `run_id` goes on, on `doc`
    /// when given, else on the stored blueprint it was of.
    pub fn resume_cli(&self, request: CliResume) -> Result<(RunStarted, EventStream)> {
        let mut spec = self.app.resume_plan(&request.run_id, request.doc.map(|doc| Target::Inline(doc.0)))?;
        spec.timeout_ms = request.timeout_ms;
        self.start(spec)
    }

    /// `mcpflow answer` through the service: the open question of `step` in run `run_id`
    /// answered from the `--answers` file's entry for it; the run goes on — in flight
    /// here, or resumed when it was left waiting (on `doc` when given).
    pub fn answer_cli(&self, request: CliAnswer) -> Result<(RunStarted, EventStream)> {
        let file = request.answers_file.unwrap_or_default();
        let answers = mcpflow_app::people::Answers::from_value(std::path::Path::new(&file), request.answers)
            .map_err(|m| CommandError::new("BAD_REQUEST", m))?;
        let question = self.app.waiting_question(&request.run_id, &request.step)?;
        let answer = match answers.answer(&question) {
            Some(Ok(answer)) => answer,
            Some(Err(e)) => return Err(CommandError::new(&e.code, e.message)),
            None => {
                return Err(CommandError::new(
                    "INPUT_REQUIRED",
                    format!(
                        "{file} has no answer for step `{}` ({}); add {{\"{}\": …}}",
                        request.step, question.message, request.step
                    ),
                ));
            }
        };
        let target = request.doc.map(|d| Target::Inline(d.0));
        let answered = self.app.answer_and_follow(&request.run_id, &question.id, answer, target)?;
        Ok((RunStarted { run_id: answered.run_id, blueprint: answered.blueprint }, EventStream::local(answered.events)))
    }

    /// Follows run `run_id` in flight: in this process, from its broadcast; run by another
    /// process on the same store (a worker of a team's database), from its journal.
    pub fn follow_run(&self, run_id: String) -> Result<(RunStarted, EventStream)> {
        let events = match self.app.subscribe(&run_id) {
            Ok(events) => events,
            Err(not_here @ mcpflow_app::AppError::NotRunning(_)) => {
                return match self.app.store().run(&run_id).map_err(mcpflow_app::AppError::from)? {
                    Some(record) if super::journal::unfinished(record.status) => {
                        let events = super::journal::follow(self.app.store().clone(), run_id.clone());
                        Ok((RunStarted { run_id, blueprint: record.blueprint }, events))
                    }
                    _ => Err(not_here.into()),
                };
            }
            Err(e) => return Err(e.into()),
        };
        let blueprint = self
            .app
            .active_runs()
            .into_iter()
            .find(|(id, _)| *id == run_id)
            .map(|(_, blueprint)| blueprint)
            .unwrap_or_default();
        Ok((RunStarted { run_id, blueprint }, EventStream::local(events)))
    }
}

/// A run the CLI asks the service for (`mcpflow run --store`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CliRun {
    pub doc: Json,
    pub inputs: Json,
    pub timeout_ms: Option<u64>,
    /// The `--answers` file's content, and its path.
    pub answers: Option<serde_json::Value>,
    pub answers_file: Option<String>,
    #[serde(default)]
    pub wait: bool,
}

/// A re-run the CLI asks the service for (`mcpflow rerun`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CliRerun {
    pub run_id: String,
    pub step: String,
    #[serde(default)]
    pub from_here: bool,
    pub doc: Option<Json>,
    pub timeout_ms: Option<u64>,
}

/// A resume the CLI asks the service for (`mcpflow resume`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CliResume {
    pub run_id: String,
    pub doc: Option<Json>,
    pub timeout_ms: Option<u64>,
}

/// An answer the CLI gives through the service (`mcpflow answer`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CliAnswer {
    pub run_id: String,
    pub step: String,
    /// The `--answers` file's content, and its path.
    pub answers: serde_json::Value,
    pub answers_file: Option<String>,
    pub doc: Option<Json>,
}

/// How long events gather before they go out as one batch: one frame.
const FRAME: Duration = Duration::from_millis(16);
/// A batch goes at once past this many events, frame or not.
pub(super) const MAX_BATCH: usize = 4096;

/// A run's events in batches, one per frame at most, ending with the batch marked `done`
/// (the run ended), or with `None` (the run's source went away: the service stopped).
#[derive(Debug)]
pub struct EventStream {
    source: Source,
    ended: bool,
}

#[derive(Debug)]
enum Source {
    Local(broadcast::Receiver<Arc<RunEvent>>),
    Remote(tokio::sync::mpsc::Receiver<EventBatch>),
}

impl EventStream {
    pub(crate) fn local(events: broadcast::Receiver<Arc<RunEvent>>) -> Self {
        EventStream { source: Source::Local(events), ended: false }
    }

    pub(crate) fn remote(batches: tokio::sync::mpsc::Receiver<EventBatch>) -> Self {
        EventStream { source: Source::Remote(batches), ended: false }
    }

    /// The next batch; `None` after the last.
    pub async fn next_batch(&mut self) -> Option<EventBatch> {
        if self.ended {
            return None;
        }
        let batch = match &mut self.source {
            Source::Local(events) => Some(gather(events).await),
            Source::Remote(batches) => batches.recv().await,
        };
        self.ended = batch.as_ref().is_none_or(|b| b.done);
        batch
    }
}

/// The events that arrive within a frame of the first (or until the run ends).
async fn gather(events: &mut broadcast::Receiver<Arc<RunEvent>>) -> EventBatch {
    let mut done = false;
    let mut batch = Vec::new();
    let mut lagged = 0u64;
    match events.recv().await {
        Ok(e) => batch.push(e),
        Err(RecvError::Lagged(n)) => lagged += n,
        Err(RecvError::Closed) => done = true,
    }
    let frame = tokio::time::Instant::now() + FRAME;
    while !done && batch.len() < MAX_BATCH {
        match tokio::time::timeout_at(frame, events.recv()).await {
            Ok(Ok(e)) => batch.push(e),
            Ok(Err(RecvError::Lagged(n))) => lagged += n,
            Ok(Err(RecvError::Closed)) => done = true,
            Err(_) => break,
        }
    }
    encode_batch(&batch, u32::try_from(lagged).unwrap_or(u32::MAX), done)
}

/// A batch of `events` as it travels (the engine's JSON of each event).
pub(super) fn encode_batch<T: serde::Serialize>(events: &[T], lagged: u32, done: bool) -> EventBatch {
    let json = serde_json::to_value(events).unwrap_or_else(|e| {
        tracing::error!("could not encode run events: {e}");
        serde_json::Value::Array(Vec::new())
    });
    EventBatch { events: Json(json), lagged, done }
}
