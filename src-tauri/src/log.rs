//! The studio's log on stderr, and what is kept out of it: rmcp's own events. Its HTTP
//! transport logs reqwest errors as they are ("sse stream error: … for url (…)"), whose
//! text holds the resolved URL — with a `${env:…}` secret in its query when the entry
//! puts one there — and that text passes no redaction of ours. The same failures reach
//! the pool as errors, which `mcpflow_mcp` redacts (`pool/hidden.rs`) and the studio
//! shows, so dropping rmcp's lines loses nothing a person can act on. All of them go,
//! errors too: rmcp's error-level lines ("…, max retry times reached", "worker quit with
//! fatal: …") carry the same reqwest text.

/// Installs the studio's log: plain lines on stderr, our events at `info` and above and
/// none of rmcp's or OpenTelemetry's own (a collector that is down is told once, in our
/// words, by the application's telemetry) — the CLI's `--log-format text`
/// (`mcpflow_telemetry::log`).
pub fn init() {
    mcpflow_app::telemetry::init_log(mcpflow_app::telemetry::LogFormat::Text);
}

#[cfg(test)]
mod tests {
    use mcpflow_app::telemetry::log_filter as filter;
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

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
    fn rmcp_lines_with_a_secret_url_stay_out_of_the_log() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber =
            tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish().with(filter());
        tracing::subscriber::with_default(subscriber, || {
            // What rmcp 3.9's `client_side_sse.rs` and `worker.rs` print, with their targets.
            tracing::warn!(
                target: "rmcp::transport::common::client_side_sse",
                "sse stream error: error sending request for url (http://127.0.0.1:9/mcp?key=S3CRET-TOKEN)"
            );
            tracing::error!(
                target: "rmcp::transport::worker",
                "worker quit with fatal: Transport channel closed, when error sending request for url (http://h/mcp?key=S3CRET-TOKEN)"
            );
            tracing::warn!(target: "mcpflow_mcp::pool", "server `docs` stopped; it starts again on next use");
            tracing::debug!(target: "mcpflow_app::runs", "a debug line of ours");
            tracing::warn!(target: "opentelemetry_sdk", "BatchSpanProcessor.ExportError http://collector/v1/traces");
            tracing::warn!(target: "opentelemetry_otlp::exporter", "an OTLP export line");
        });
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert!(!text.contains("S3CRET-TOKEN"), "the log shows rmcp's line with the secret: {text}");
        assert!(text.contains("server `docs` stopped"), "our own warnings stay: {text}");
        assert!(!text.contains("a debug line of ours"), "the level stays at info: {text}");
        assert!(
            !text.contains("ExportError") && !text.contains("OTLP export"),
            "OpenTelemetry's own lines stay out: {text}"
        );
    }
}
