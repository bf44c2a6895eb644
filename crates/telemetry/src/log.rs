//! The process's log on stderr for `--log-format text|json`: our events at `info` and
//! above, none of rmcp's (its HTTP errors print resolved URLs, which may carry a
//! `${env:…}` secret) and none of OpenTelemetry's own (a collector that is down is told
//! once by the [`Reporter`](crate::Reporter) instead). In JSON each line carries the
//! fields of the span it was logged in (the run's `run_id` and `trace_id`, once the
//! engine opens such spans), so logs and traces can be joined.

use std::io::IsTerminal as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Plain lines.
    Text,
    /// One JSON object per line, with the current span's fields.
    Json,
}

/// What is logged: ours at `info` and above; rmcp and OpenTelemetry not at all.
pub fn filter() -> Targets {
    Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("rmcp", LevelFilter::OFF)
        .with_target("opentelemetry", LevelFilter::OFF)
        .with_target("opentelemetry_sdk", LevelFilter::OFF)
        .with_target("opentelemetry_otlp", LevelFilter::OFF)
        .with_target("opentelemetry_http", LevelFilter::OFF)
}

/// Installs the log on stderr. Does nothing when a subscriber is installed already.
pub fn init(format: LogFormat) {
    // `try_init` fails only when a subscriber is already installed, which keeps that one.
    let _ = match format {
        LogFormat::Text => tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .finish()
            .with(filter())
            .try_init(),
        LogFormat::Json => json(std::io::stderr).with(filter()).try_init(),
    };
}

fn json<W>(writer: W) -> impl tracing::Subscriber + Send + Sync + for<'a> tracing_subscriber::registry::LookupSpan<'a>
where
    W: for<'a> tracing_subscriber::fmt::MakeWriter<'a> + Send + Sync + 'static,
{
    tracing_subscriber::fmt().json().with_current_span(true).with_span_list(false).with_writer(writer).finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn json_lines_carry_the_current_span_and_leave_rmcp_and_opentelemetry_out() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = json(move || writer.clone()).with(filter());
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("run", run_id = "r1", trace_id = "4bf92f3577b34da6a3ce929d0e0e4736");
            let _entered = span.enter();
            tracing::info!(step = "fetch", "step started");
            tracing::warn!(target: "rmcp::transport::worker", "error sending request for url (http://h/mcp?key=S3CRET)");
            tracing::warn!(target: "opentelemetry_sdk", "BatchSpanProcessor.ExportError");
        });
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert_eq!(lines[0]["fields"]["message"], "step started");
        assert_eq!(lines[0]["fields"]["step"], "fetch");
        assert_eq!(lines[0]["span"]["name"], "run");
        assert_eq!(lines[0]["span"]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(!text.contains("S3CRET"));
    }
}
