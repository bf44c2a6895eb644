//! The telemetry flags (`--otlp URL`, `--otlp-capture-payloads`) and starting the
//! exporter they, `settings.json` or the `OTEL_*` environment configure.

use clap::Args;
use mcpflow_app::telemetry::{self, Flags, Otel};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct TelemetryArgs {
    /// Send the run's traces to this OpenTelemetry collector (OTLP, its base URL, e.g.
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
    /// Starts telemetry when configured; a configuration error is printed and is the
    /// exit code. Problems while exporting are printed once each on stderr and never
    /// change the run's outcome.
    #[allow(clippy::print_stderr)]
    pub(crate) fn start(&self, short_lived: bool) -> Result<Option<Arc<Otel>>, ExitCode> {
        let flags = Flags { otlp: self.otlp.clone(), capture_payloads: self.otlp_capture_payloads };
        let report: telemetry::Reporter = Arc::new(|line: &str| eprintln!("{line}"));
        telemetry::start(&flags, &mcpflow_app::home::data_dir(), short_lived, report).map_err(|e| {
            eprintln!("error[{}]: {e}", e.code());
            ExitCode::from(crate::run::EXIT_USAGE)
        })
    }
}
