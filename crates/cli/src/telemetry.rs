//! The telemetry flags (`--otlp URL`, `--otlp-capture-payloads`) of `run`, `serve`,
//! `daemon` and `service`, and starting the exporter they, `settings.json` or the
//! `OTEL_*` environment configure. A short-lived `run` starts its own; the long-lived
//! front doors give the flags to the application (`AppOptions.telemetry`), which owns the
//! exporter; `serve` passes them on to the `mcpflow service` it starts.

use clap::Args;
use mcpflow_app::telemetry::{self, Config, Flags, Otel, TelemetryOptions};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args, Clone, Default)]
pub struct TelemetryArgs {
    /// Send traces and metrics to this OpenTelemetry collector (OTLP, its base URL, e.g.
    /// http://localhost:4318). Off unless given here, in settings.json's `telemetry`
    /// section, or by OTEL_EXPORTER_OTLP_ENDPOINT; OTEL_SDK_DISABLED=true turns it off.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// Put tool arguments and results on the spans (off by default: secrets and personal
    /// data stay out of traces).
    #[arg(long)]
    otlp_capture_payloads: bool,
}

impl TelemetryArgs {
    fn flags(&self) -> Flags {
        Flags { otlp: self.otlp.clone(), capture_payloads: self.otlp_capture_payloads }
    }

    /// Whether either flag was given.
    pub(crate) fn given(&self) -> bool {
        self.otlp.is_some() || self.otlp_capture_payloads
    }

    /// Starts telemetry when configured; a configuration error is printed and is the
    /// exit code. Problems while exporting are printed once each on stderr and never
    /// change the run's outcome.
    #[allow(clippy::print_stderr)]
    pub(crate) fn start(&self, short_lived: bool) -> Result<Option<Arc<Otel>>, ExitCode> {
        let report: telemetry::Reporter = Arc::new(|line: &str| eprintln!("{line}"));
        telemetry::start(&self.flags(), &mcpflow_app::home::data_dir(), short_lived, report).map_err(|e| {
            eprintln!("error[{}]: {e}", e.code());
            ExitCode::from(crate::run::EXIT_USAGE)
        })
    }

    /// Refuses a `--otlp` that is not a collector's URL before anything starts (the
    /// settings and the environment are the application's to check and tell).
    #[allow(clippy::print_stderr)]
    pub(crate) fn check(&self) -> Result<(), ExitCode> {
        if self.otlp.is_none() {
            return Ok(());
        }
        Config::resolve(&self.flags(), None, |_| None).map(|_| ()).map_err(|e| {
            eprintln!("error[{}]: {e}", e.code());
            ExitCode::from(crate::run::EXIT_USAGE)
        })
    }

    /// The flags for a long-lived application; its problems (a collector down, spans
    /// dropped) are printed on stderr — the service's is its `service.log` — or logged when
    /// `--log-format` installed a log.
    pub(crate) fn options(&self) -> TelemetryOptions {
        let report: telemetry::Reporter = Arc::new(|line: &str| {
            if tracing::dispatcher::has_been_set() {
                tracing::warn!("{line}");
            } else {
                #[allow(clippy::print_stderr)]
                {
                    eprintln!("{line}");
                }
            }
        });
        TelemetryOptions { flags: self.flags(), report: Some(report) }
    }

    /// The flags again, for the `mcpflow service` a front door starts.
    pub(crate) fn service_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(url) = &self.otlp {
            args.extend(["--otlp".to_owned(), url.clone()]);
        }
        if self.otlp_capture_payloads {
            args.push("--otlp-capture-payloads".to_owned());
        }
        args
    }

    /// Says once that the flags do not apply because the data folder's service, already
    /// running, does the work with its own telemetry configuration; the command goes on.
    #[allow(clippy::print_stderr)]
    pub(crate) fn warn_service_running(&self, pid: Option<u32>, home: &Path) {
        if !self.given() {
            return;
        }
        let named: Vec<&str> =
            [self.otlp.is_some().then_some("--otlp"), self.otlp_capture_payloads.then_some("--otlp-capture-payloads")]
                .into_iter()
                .flatten()
                .collect();
        let flags = match named.as_slice() {
            [one] => format!("{one} does"),
            many => format!("{} do", many.join(" and ")),
        };
        let who =
            pid.map_or_else(|| "the mcpflow service".to_owned(), |pid| format!("the mcpflow service (pid {pid})"));
        let stop = pid.map_or_else(String::new, |pid| format!(" (`kill {pid}`; it also exits when idle)"));
        eprintln!(
            "warning: {flags} not apply: {who} already holds {} and traces with its own configuration. To use \
             them, stop it{stop} and run this again; or set the collector in the studio (Servers panel, \
             Telemetry) or in the `telemetry` section of {}, which the service applies from its next run.",
            home.display(),
            mcpflow_app::sampling::settings_path(home).display()
        );
    }
}
