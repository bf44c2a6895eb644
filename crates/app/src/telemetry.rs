//! Telemetry for the front doors: the configuration from the flags, the `telemetry`
//! section of the data folder's `settings.json` and the `OTEL_*` environment, and the
//! OpenTelemetry exporter started from it (`mcpflow-telemetry`). Off unless one of them
//! names an endpoint.

use crate::sampling::{read_settings_bytes, settings_path};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

pub use mcpflow_telemetry::log::{LogFormat, init as init_log};
pub use mcpflow_telemetry::{Config, Flags, Otel, Reporter, Settings};

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
    let settings = match read_settings(home) {
        Err(TelemetryError::File(problem)) => {
            report(&format!("telemetry: {problem}; its `telemetry` section is ignored"));
            None
        }
        other => other?,
    };
    let Some(mut config) = Config::resolve(flags, settings.as_ref(), |k| std::env::var(k).ok())? else {
        return Ok(None);
    };
    config.retries = !short_lived;
    Ok(Some(Arc::new(Otel::start(&config, report)?)))
}

impl crate::App {
    /// Where this application's runs and `mcpflow serve` calls send their spans; `None`:
    /// telemetry is off. (Interim: the App's own telemetry state is being wired; until
    /// then only headless runs trace.)
    pub fn telemetry(&self) -> Option<Arc<dyn mcpflow_engine::Telemetry>> {
        None
    }
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
