//! A blueprint's tests in the data folder (the studio's "Save this run as a test" and its
//! Tests list): `tests/<blueprint id>/` holds the blueprint as last tested
//! (`<id>.blueprint.json`), and for each test `NAME.test.json` with its
//! `NAME.cassette.json` — the files `mcpflow test` runs (`cassette/suite.rs`), with the
//! same code. See docs/testing.md, "From the studio".
//!
//! A studio's blueprints live in its store, not in files, so their tests live in the
//! data folder. A run saved as a test is not recorded as it runs: its cassette is made
//! from the run's record (`cassette/journal.rs`), then replayed once before anything is
//! kept, so a saved test passes when it is saved.

use crate::cassette::suite::{self, Verdict};
use crate::cassette::{journal, record};
use crate::error::{AppError, Result};
use crate::{App, headless};
use mcpflow_blueprint::StepKind;
use mcpflow_config::ServerEntry;
use mcpflow_config::env::process_env;
use mcpflow_config::launch::{Secrets, secrets_of};
use mcpflow_engine::RunStatus;
use mcpflow_store::RecordStatus;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

/// A run saved as a test.
#[derive(Debug, Clone)]
pub struct SavedTest {
    pub name: String,
    /// The test file.
    pub file: PathBuf,
    /// The exchanges its cassette holds.
    pub exchanges: usize,
}

/// One test of a blueprint, and how it went when it ran.
#[derive(Debug, Clone)]
pub struct TestOutcome {
    pub name: String,
    pub file: PathBuf,
    /// `None`: passed; else why it failed.
    pub failure: Option<String>,
    /// The status of the replayed run, when it ran.
    pub status: Option<RunStatus>,
}

impl App {
    /// The folder holding blueprint `id`'s tests: `tests/<id>/` in the data folder.
    pub fn tests_folder(&self, id: &str) -> Result<PathBuf> {
        let plain = id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if id.is_empty() || !plain || id.starts_with(['-', '_']) {
            return Err(AppError::BadRequest(format!(
                "`{id}` is not a blueprint id (lower-case letters, digits, `-` and `_`); fix the document's `id`"
            )));
        }
        Ok(self.inner.home.join("tests").join(id))
    }

    /// Saves finished run `run_id` of `doc` (the blueprint that ran: the document on the
    /// canvas) as a test of it: the blueprint, the cassette made from the run's record,
    /// and a test expecting the run's inputs to give its status and output again. The
    /// test is replayed once first; when it does not pass, nothing is kept and the error
    /// says why (the document changed since the run, a step the replay cannot do).
    pub async fn save_run_as_test(&self, doc: &Value, run_id: &str) -> Result<SavedTest> {
        let detail = self.run_detail(run_id)?;
        let record = &detail.record;
        let refuse =
            |why: String| Err(AppError::BadRequest(format!("run `{run_id}` cannot be saved as a test: {why}")));
        let Some(envelope) = &record.envelope else {
            return refuse("it has not finished".into());
        };
        if !matches!(record.status, RecordStatus::Succeeded | RecordStatus::Partial | RecordStatus::Failed) {
            return refuse(format!(
                "it ended {}; save a run that succeeded or failed by itself",
                word(&envelope.status)
            ));
        }
        if record.rerun_of.is_some() || record.resumed_from.is_some() {
            return refuse("it re-ran or resumed part of another run; save a test from a whole run".into());
        }
        let id = doc.get("id").and_then(Value::as_str).unwrap_or_default();
        if id != record.blueprint {
            return refuse(format!("it is a run of `{}`, and the document is `{id}`", record.blueprint));
        }
        let text = serde_json::to_string_pretty(doc).map_err(|e| AppError::BadRequest(e.to_string()))? + "\n";
        let checked = headless::check(text.as_bytes()).map_err(|e| match e {
            headless::HeadlessError::Invalid(list) => AppError::Invalid(list),
            other => AppError::BadRequest(other.to_string()),
        })?;
        if let Some(step) = checked.plan.steps.iter().find(|s| matches!(s.step.kind, StepKind::Workflow(_))) {
            return refuse(format!(
                "step `{}` runs another blueprint, whose calls its record does not hold",
                step.step.id()
            ));
        }
        let cassette = journal::cassette(&checked.plan, &detail.events);
        let secrets = self.secrets_for(&checked.blueprint).await;
        let cassette = serde_json::to_value(&cassette)
            .ok()
            .map(|v| record::redact(v, &secrets))
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or(cassette);

        let folder = self.tests_folder(id)?;
        crate::home::create_private(&folder).map_err(|e| io(&folder, &e))?;
        let name = free_name(&folder, &record.started_at);
        let (file, cassette_file) =
            (folder.join(format!("{name}.test.json")), folder.join(format!("{name}.cassette.json")));
        let test = json!({
            "blueprint": blueprint_file(id),
            "inputs": record.inputs,
            "cassette": format!("{name}.cassette.json"),
            "expect": {"status": envelope.status, "output": envelope.output},
        });
        write(&folder.join(blueprint_file(id)), &text)?;
        record::write(&cassette_file, &cassette).map_err(|e| io(&cassette_file, &e))?;
        write(&file, &(serde_json::to_string_pretty(&test).unwrap_or_default() + "\n"))?;
        let verdict = suite::run_test(&file, CancellationToken::new()).await;
        if let Some(failure) = verdict.failure {
            let _ = std::fs::remove_file(&file);
            let _ = std::fs::remove_file(&cassette_file);
            return refuse(format!(
                "replayed from its record, it does not give the same result ({failure}); was the blueprint changed since the run? Run it again, then save that run"
            ));
        }
        Ok(SavedTest { name, file, exchanges: cassette.exchanges.len() })
    }

    /// Blueprint `id`'s tests (`*.test.json` in its folder), by name; none when it has no
    /// folder yet.
    pub fn blueprint_tests(&self, id: &str) -> Result<Vec<(String, PathBuf)>> {
        let folder = self.tests_folder(id)?;
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&folder, &e)),
        };
        let mut tests: Vec<(String, PathBuf)> = entries
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                let name = path.file_name()?.to_str()?.strip_suffix(".test.json")?.to_owned();
                Some((name, path))
            })
            .collect();
        tests.sort();
        Ok(tests)
    }

    /// Runs every test of `doc`'s blueprint over its cassette, starting no server, with
    /// `doc` (the document on the canvas, saved or not) as the blueprint under test: it is
    /// written to the tests' folder first, so `mcpflow test` there runs the same.
    pub async fn run_blueprint_tests(&self, doc: &Value) -> Result<Vec<TestOutcome>> {
        let id = doc.get("id").and_then(Value::as_str).unwrap_or_default();
        let tests = self.blueprint_tests(id)?;
        if tests.is_empty() {
            return Ok(Vec::new());
        }
        let text = serde_json::to_string_pretty(doc).map_err(|e| AppError::BadRequest(e.to_string()))? + "\n";
        write(&self.tests_folder(id)?.join(blueprint_file(id)), &text)?;
        let mut outcomes = Vec::with_capacity(tests.len());
        for (name, file) in tests {
            let Verdict { failure, envelope, .. } = suite::run_test(&file, CancellationToken::new()).await;
            outcomes.push(TestOutcome { name, file, failure, status: envelope.map(|e| e.status) });
        }
        Ok(outcomes)
    }

    /// What a cassette of `bp`'s runs must hide: the secrets of the live sessions (OAuth
    /// tokens too) and of every server entry it may have used, started or not.
    async fn secrets_for(&self, bp: &mcpflow_blueprint::Blueprint) -> Secrets {
        let mut secrets = self.pool().secrets().await;
        let env = process_env();
        for (name, entry) in self.server_state().configs.iter() {
            if let ServerEntry::Config(config) = entry {
                secrets.join(&secrets_of(name, config, &env));
            }
        }
        for (name, config) in &bp.servers {
            secrets.join(&secrets_of(name, config, &env));
        }
        secrets
    }
}

/// The blueprint's file in its tests' folder.
fn blueprint_file(id: &str) -> String {
    format!("{id}.blueprint.json")
}

/// `run-YYYYMMDD-HHMMSS` from the run's start (RFC 3339), with `-2`, `-3`… when taken.
fn free_name(folder: &Path, started_at: &str) -> String {
    let digits: String = started_at.chars().filter(char::is_ascii_digit).take(14).collect();
    let base = if digits.len() == 14 { format!("run-{}-{}", &digits[..8], &digits[8..]) } else { "run".to_owned() };
    let taken = |name: &str| folder.join(format!("{name}.test.json")).exists();
    if !taken(&base) {
        return base;
    }
    (2..).map(|n| format!("{base}-{n}")).find(|name| !taken(name)).unwrap_or(base)
}

fn write(path: &Path, text: &str) -> Result<()> {
    crate::files::write_whole(path, text).map_err(|e| io(path, &e))
}

fn io(path: &Path, e: &std::io::Error) -> AppError {
    AppError::BadRequest(format!("{}: {e}; check that the data folder can be written", path.display()))
}

fn word(status: &RunStatus) -> String {
    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}
