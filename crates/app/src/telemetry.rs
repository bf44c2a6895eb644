//! Telemetry for the front doors: the configuration from the flags, the `telemetry`
//! section of the data folder's `settings.json` and the `OTEL_*` environment, and the
//! OpenTelemetry exporter started from it (`mcpflow-telemetry`). Off unless one of them
//! names an endpoint.

use crate::sampling::{read_section, read_settings_bytes, settings_path};
use mcpflow_engine::telemetry::{Measure, OpenSpan, SpanStart, Telemetry};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use mcpflow_telemetry::log::{LogFormat, filter as log_filter, init as init_log};
pub use mcpflow_telemetry::{Config, Flags, Otel, Protocol, Reporter, Settings};

/// Why telemetry could not start; the run does not start either, so the person fixes
/// the flag, the file or the variable first.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// `settings.json` cannot be read or is not a JSON object: [`start`] then tells it
    /// once and goes on without the section (a run that asked for no telemetry must not
    /// fail on it).
    #[error("{0}")]
    File(String),
    /// The `telemetry` section of `settings.json` is not valid.
    #[error("{0}")]
    Settings(String),
    #[error(transparent)]
    Telemetry(#[from] mcpflow_telemetry::Error),
}

impl TelemetryError {
    /// A stable code for scripts.
    pub fn code(&self) -> &'static str {
        match self {
            TelemetryError::File(_) | TelemetryError::Settings(_) => "SETTINGS_INVALID",
            TelemetryError::Telemetry(e) => e.code(),
        }
    }
}

/// The `telemetry` section of `settings.json` in data folder `home`: `Ok(None)` when
/// there is no file or no section.
pub fn read_settings(home: &Path) -> Result<Option<Settings>, TelemetryError> {
    let path = settings_path(home);
    let bytes = read_settings_bytes(&path).map_err(TelemetryError::File)?;
    let Some(bytes) = bytes else { return Ok(None) };
    let file: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes)
        .map_err(|e| TelemetryError::File(format!("{}: not a JSON object ({e})", path.display())))?;
    let Some(section) = file.get("telemetry").filter(|s| !s.is_null()) else { return Ok(None) };
    Settings::deserialize(section).map(Some).map_err(|e| {
        TelemetryError::Settings(format!("{}: telemetry: {e}; fix the section or remove it", path.display()))
    })
}

/// The configuration of the flags, the settings of data folder `home` and the
/// environment (`Ok(None)`: telemetry is off). A settings file that cannot be read is
/// told through `report`, once, and its section ignored.
pub fn resolve(flags: &Flags, home: &Path, report: &Reporter) -> Result<Option<Config>, TelemetryError> {
    let settings = match read_settings(home) {
        Err(TelemetryError::File(problem)) => {
            report(&format!("telemetry: {problem}; its `telemetry` section is ignored"));
            None
        }
        other => other?,
    };
    Ok(Config::resolve(flags, settings.as_ref(), |k| std::env::var(k).ok())?)
}

/// Starts telemetry when it is configured (`Ok(None)`: it is off, and nothing is built).
/// `short_lived`: a process that exits after one run (`mcpflow run`), which does not
/// retry failed exports so that its exit never waits through the backoff. Call
/// [`Otel::shutdown`] once the work is done, off the async runtime.
pub fn start(
    flags: &Flags,
    home: &Path,
    short_lived: bool,
    report: Reporter,
) -> Result<Option<Arc<Otel>>, TelemetryError> {
    let Some(mut config) = resolve(flags, home, &report)? else {
        return Ok(None);
    };
    config.retries = !short_lived;
    Ok(Some(Arc::new(Otel::start(&config, report)?)))
}

/// The telemetry of a long-lived process, as given to [`crate::AppOptions`]: its flags
/// (`mcpflow service --otlp URL`) and where its problems are told (default: the log,
/// `tracing::warn!`).
#[derive(Clone, Default)]
pub struct TelemetryOptions {
    pub flags: Flags,
    pub report: Option<Reporter>,
}

impl std::fmt::Debug for TelemetryOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryOptions").field("flags", &self.flags).finish_non_exhaustive()
    }
}

impl TelemetryOptions {
    fn reporter(&self) -> Reporter {
        self.report.clone().unwrap_or_else(|| Arc::new(|line: &str| tracing::warn!("{line}")))
    }
}

/// An exporter the application started. The runs that use it hold it; when it is
/// replaced (a settings change) the last of them to let go shuts it down on a thread of
/// its own ([`Otel::shutdown_detached`]), so no run loses its last spans and no runtime
/// thread waits on a collector.
pub(crate) struct Live {
    otel: Otel,
    /// Where spans go (`…/v1/traces`), for the studio's form.
    pub(crate) traces: Option<String>,
    closed: AtomicBool,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").field("traces", &self.traces).finish_non_exhaustive()
    }
}

impl Live {
    /// Sends what is queued, waiting at most [`mcpflow_telemetry::SHUTDOWN_TIMEOUT`]:
    /// blocking, off the runtime.
    pub(crate) fn close(&self) {
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.otel.shutdown();
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.otel.shutdown_detached();
        }
    }
}

impl Telemetry for Live {
    fn start(&self, span: SpanStart<'_>) -> Box<dyn OpenSpan> {
        self.otel.start(span)
    }

    fn measure(&self, measure: Measure) {
        self.otel.measure(measure);
    }

    fn capture_payloads(&self) -> bool {
        self.otel.capture_payloads()
    }
}

/// The application's telemetry now: the exporter runs use (none: off) and why the last
/// attempt to start one failed.
#[derive(Default)]
pub(crate) struct TelemetryState {
    pub(crate) live: Option<Arc<Live>>,
    pub(crate) problem: Option<String>,
}

/// Starts the exporter of `options` and data folder `home` (not `short_lived`: failed
/// exports are retried). A configuration that does not start is told and leaves
/// telemetry off: the process still serves, untraced.
pub(crate) fn start_state(options: &TelemetryOptions, home: &Path) -> TelemetryState {
    let report = options.reporter();
    let started = resolve(&options.flags, home, &report).and_then(|config| {
        let Some(config) = config else { return Ok(None) };
        let traces = config.traces_endpoint.clone();
        let otel = Otel::start(&config, report.clone())?;
        Ok(Some(Live { otel, traces, closed: AtomicBool::new(false) }))
    });
    match started {
        Ok(live) => TelemetryState { live: live.map(Arc::new), problem: None },
        Err(e) => {
            let problem = format!("telemetry is off: {e} [{}]", e.code());
            report(&problem);
            TelemetryState { live: None, problem: Some(problem) }
        }
    }
}

/// The `telemetry` section as the studio's form shows it, with what is in effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryView {
    /// The settings file (`settings.json` in the data folder).
    pub path: PathBuf,
    /// The section as written (also one that does not pass the checks: see `problem`).
    pub settings: Option<Settings>,
    /// What is wrong with the file or its section, naming the file and the field.
    pub problem: Option<String>,
    /// The file is absent or a JSON object, so the section can be written.
    pub writable: bool,
    /// Variables the section's headers read that are not set in this process.
    pub missing_vars: Vec<String>,
    /// Where spans go now (`…/v1/traces`); none: telemetry is off.
    pub sending_to: Option<String>,
    /// Why telemetry could not start with what is configured (it is off meanwhile).
    pub start_problem: Option<String>,
    /// `--otlp` given to this process: it wins over the section's endpoint.
    pub flag_endpoint: Option<String>,
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` of this process: used when the section names none.
    pub env_endpoint: Option<String>,
}

/// The `telemetry` section of `settings.json` in data folder `home`, for the studio's
/// form; never fails (a file or section that cannot be used is described in `problem`).
pub(crate) fn view(home: &Path) -> TelemetryView {
    let path = settings_path(home);
    let mut out = TelemetryView {
        path: path.clone(),
        settings: None,
        problem: None,
        writable: false,
        missing_vars: Vec::new(),
        sending_to: None,
        start_problem: None,
        flag_endpoint: None,
        env_endpoint: std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok().filter(|v| !v.trim().is_empty()),
    };
    let (writable, section) = read_section(&path, "telemetry");
    out.writable = writable;
    let section = match section {
        Ok(Some(section)) => section,
        Ok(None) => return out,
        Err(problem) => {
            out.problem = Some(problem);
            return out;
        }
    };
    match Settings::deserialize(section) {
        Ok(settings) => {
            if let Err(e) = settings.check() {
                out.problem = Some(format!("{}: telemetry: {e}", path.display()));
            }
            out.missing_vars = settings
                .headers
                .values()
                .filter_map(|v| mcpflow_telemetry::env_reference(v))
                .filter(|var| std::env::var_os(var).is_none())
                .map(str::to_owned)
                .collect();
            out.settings = Some(settings);
        }
        Err(e) => out.problem = Some(format!("{}: telemetry: {e}; fix the section or save it again", path.display())),
    }
    out
}

/// Writes the `telemetry` section of `settings.json` in data folder `home` (`None`
/// removes it), keeping the rest of the file; refused, with the field named, when it
/// does not pass [`Settings::check`]. Text is trimmed; an empty endpoint is left out.
pub fn write_settings(home: &Path, settings: Option<&Settings>) -> Result<(), String> {
    let section = match settings {
        Some(s) => {
            let mut s = s.clone();
            s.endpoint = s.endpoint.map(|e| e.trim().to_owned()).filter(|e| !e.is_empty());
            s.headers = s.headers.into_iter().map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
            s.check().map_err(|e| format!("{e} [{}] (nothing was written)", e.code()))?;
            Some(serde_json::to_value(&s).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    crate::sampling::write_section(home, "telemetry", section)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_section_is_read_and_its_problems_name_the_file() {
        let home = tempfile::tempdir().unwrap();
        assert_eq!(read_settings(home.path()).unwrap(), None);
        std::fs::write(
            settings_path(home.path()),
            r#"{"sampling": null, "telemetry": {"endpoint": "http://localhost:4318"}}"#,
        )
        .unwrap();
        let settings = read_settings(home.path()).unwrap().unwrap();
        assert_eq!(settings.endpoint.as_deref(), Some("http://localhost:4318"));
        std::fs::write(settings_path(home.path()), r#"{"telemetry": {"endpoint": 3}}"#).unwrap();
        let err = read_settings(home.path()).unwrap_err();
        assert!(matches!(err, TelemetryError::Settings(_)), "{err:?}");
        assert_eq!(err.code(), "SETTINGS_INVALID");
        assert!(err.to_string().contains("settings.json") && err.to_string().contains("telemetry"), "{err}");
    }

    #[test]
    fn a_broken_settings_file_is_told_and_does_not_stop_a_run_that_asked_for_no_telemetry() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(settings_path(home.path()), "{ not json").unwrap();
        assert!(matches!(read_settings(home.path()), Err(TelemetryError::File(_))));
        if std::env::vars().any(|(k, _)| k.starts_with("OTEL_EXPORTER_OTLP")) {
            return;
        }
        let told = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = told.clone();
        let report: Reporter = Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned()));
        let started = start(&Flags::default(), home.path(), true, report).unwrap();
        assert!(started.is_none());
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(told[0].contains("settings.json") && told[0].contains("ignored"), "{told:?}");
    }

    fn no_otel_env() -> bool {
        !std::env::vars().any(|(k, _)| k.starts_with("OTEL_"))
    }

    #[tokio::test]
    async fn the_studio_setting_is_written_beside_the_others_and_applies_from_the_next_run() {
        if !no_otel_env() {
            return;
        }
        let home = tempfile::tempdir().unwrap();
        std::fs::write(settings_path(home.path()), "{\"sampling\": null, \"other\": 1}\n").unwrap();
        let told = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = told.clone();
        let report: Reporter = Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned()));
        let options = crate::AppOptions {
            telemetry: TelemetryOptions { flags: Flags::default(), report: Some(report) },
            ..crate::AppOptions::default()
        };
        let app = crate::App::open(home.path(), options).unwrap();
        assert!(app.telemetry().is_none(), "off until configured");
        let view = app.telemetry_settings();
        assert_eq!((view.settings.as_ref(), view.sending_to.as_deref(), view.writable), (None, None, true));

        let receiver = mcpflow_testkit::otlp::Receiver::start(0).unwrap();
        let mut settings = Settings { endpoint: Some(format!(" {} ", receiver.url())), ..Settings::default() };
        settings.headers.insert("x-team".into(), "${env:MCPFLOW_TEST_UNSET_TEAM_KEY}".into());
        // The header's variable is not set here: the section is written, telemetry stays
        // off and says why.
        let view = app.set_telemetry_settings(Some(&settings)).unwrap();
        assert!(app.telemetry().is_none());
        assert_eq!(view.missing_vars, vec!["MCPFLOW_TEST_UNSET_TEAM_KEY".to_owned()]);
        let why = view.start_problem.clone().unwrap();
        assert!(why.contains("MCPFLOW_TEST_UNSET_TEAM_KEY") && why.contains("OTLP_HEADER_ENV_MISSING"), "{why}");
        assert!(told.lock().unwrap().iter().any(|l| l.contains("MCPFLOW_TEST_UNSET_TEAM_KEY")), "told once");

        settings.headers.clear();
        let view = app.set_telemetry_settings(Some(&settings)).unwrap();
        assert_eq!(view.sending_to, Some(format!("{}/v1/traces", receiver.url())));
        assert_eq!(view.start_problem, None);
        let text = std::fs::read_to_string(settings_path(home.path())).unwrap();
        let file: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(file["other"], 1, "{text}");
        assert_eq!(file["telemetry"]["endpoint"], receiver.url(), "trimmed: {text}");
        assert_eq!(read_settings(home.path()).unwrap().unwrap().endpoint, Some(receiver.url()));

        // A run that started before a change keeps its exporter; the next run gets the new one.
        let first = app.telemetry().unwrap();
        let view = app.set_telemetry_settings(Some(&Settings { capture_payloads: true, ..settings.clone() })).unwrap();
        assert_eq!(view.settings.as_ref().map(|s| s.capture_payloads), Some(true));
        let second = app.telemetry().unwrap();
        assert!(!first.capture_payloads() && second.capture_payloads());
        let span = first.start(SpanStart {
            name: "run old".into(),
            kind: mcpflow_engine::telemetry::SpanKind::Internal,
            parent: None,
            attrs: Vec::new(),
        });
        span.end(mcpflow_engine::telemetry::SpanStatus::Ok);
        // The replaced exporter shuts down when its last holder lets go, and sends what it had.
        drop(first);
        let spans = tokio::task::spawn_blocking(move || receiver.wait_for(1, std::time::Duration::from_secs(10)))
            .await
            .unwrap();
        assert_eq!(spans.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["run old"]);

        // Refused by name, nothing written.
        let mut literal = settings.clone();
        literal.headers.insert("x-team".into(), "the-secret".into());
        let err = app.set_telemetry_settings(Some(&literal)).unwrap_err();
        assert_eq!(err.code(), "BAD_REQUEST");
        assert!(err.to_string().contains("x-team") && !err.to_string().contains("the-secret"), "{err}");
        let bad = Settings { endpoint: Some("localhost:4318".into()), ..Settings::default() };
        let err = app.set_telemetry_settings(Some(&bad)).unwrap_err().to_string();
        assert!(err.contains("localhost:4318") && err.contains("http://"), "{err}");
        assert_eq!(std::fs::read_to_string(settings_path(home.path())).unwrap(), text.replace("false", "true"));

        drop(second);
        app.set_telemetry_settings(None).unwrap();
        assert!(app.telemetry().is_none());
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(settings_path(home.path())).unwrap()).unwrap();
        assert!(file.get("telemetry").is_none() && file["other"] == 1);
        app.shutdown().await;
    }

    #[tokio::test]
    async fn the_flag_wins_and_shutdown_sends_what_is_queued_once() {
        if !no_otel_env() {
            return;
        }
        let home = tempfile::tempdir().unwrap();
        let receiver = mcpflow_testkit::otlp::Receiver::start(0).unwrap();
        std::fs::write(settings_path(home.path()), r#"{"telemetry": {"endpoint": "http://127.0.0.1:9"}}"#).unwrap();
        let flags = Flags { otlp: Some(receiver.url()), capture_payloads: false };
        let options =
            crate::AppOptions { telemetry: TelemetryOptions { flags, report: None }, ..crate::AppOptions::default() };
        let app = crate::App::open(home.path(), options).unwrap();
        let view = app.telemetry_settings();
        assert_eq!(view.flag_endpoint, Some(receiver.url()));
        assert_eq!(view.sending_to, Some(format!("{}/v1/traces", receiver.url())));
        let telemetry = app.telemetry().unwrap();
        let span = telemetry.start(SpanStart {
            name: "run bp".into(),
            kind: mcpflow_engine::telemetry::SpanKind::Internal,
            parent: None,
            attrs: Vec::new(),
        });
        span.end(mcpflow_engine::telemetry::SpanStatus::Ok);
        drop(telemetry);
        app.shutdown().await;
        // Sent by the shutdown itself (the batch delay is 5 s).
        assert_eq!(receiver.spans().len(), 1);
        assert!(app.telemetry().is_none());
        app.shutdown().await;
    }

    #[test]
    fn nothing_configured_starts_nothing() {
        let home = tempfile::tempdir().unwrap();
        // The test process has no OTEL_* variables set (CI and the scripts set none).
        if std::env::vars().any(|(k, _)| k.starts_with("OTEL_EXPORTER_OTLP")) {
            return;
        }
        let started = start(&Flags::default(), home.path(), true, Arc::new(|_: &str| {})).unwrap();
        assert!(started.is_none());
    }
}
