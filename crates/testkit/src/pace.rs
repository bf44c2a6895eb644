//! Time inside tool calls: sleeps that end early on cancellation, and MCP progress notifications.

use std::time::Duration;

use rmcp::{RoleServer, model::ProgressNotificationParam, service::RequestContext};
use tokio_util::sync::CancellationToken;

/// The request was cancelled by the client (or the connection went away) while we waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cancelled;

/// Below this much left, the rest of a sleep is slept by the OS on a blocking thread.
const FINE: Duration = Duration::from_millis(3);

/// Sleeps for `duration` unless `ct` is cancelled first.
///
/// Tokio's timer ticks in whole milliseconds and rounds deadlines up, so `sleep(10 ms)`
/// takes 10–12 ms; a fixture whose latency is "10 ms" would then measure the timer,
/// not the client. The coarse part is a tokio sleep; the last few milliseconds are a
/// `thread::sleep` (accurate to tens of µs) on the blocking pool.
pub(crate) async fn sleep(ct: &CancellationToken, duration: Duration) -> Result<(), Cancelled> {
    if duration.is_zero() {
        return Ok(());
    }
    let deadline = std::time::Instant::now() + duration;
    let precise = async {
        if let Some(coarse) = duration.checked_sub(FINE) {
            tokio::time::sleep(coarse).await;
        }
        let rest = deadline.saturating_duration_since(std::time::Instant::now());
        if !rest.is_zero() {
            // A failed join (the runtime shutting down) just ends the sleep early.
            let _ = tokio::task::spawn_blocking(move || std::thread::sleep(rest)).await;
        }
    };
    tokio::select! {
        () = ct.cancelled() => Err(Cancelled),
        () = precise => Ok(()),
    }
}

/// Waits `interval` before each of `steps` steps and, when the request carries a progress token, sends a
/// progress notification (`progress` = step, `total` = steps) after each one.
pub(crate) async fn report_steps(
    ctx: &RequestContext<RoleServer>,
    steps: u32,
    interval: Duration,
    what: &str,
) -> Result<(), Cancelled> {
    let token = ctx.meta.get_progress_token();
    for step in 1..=steps {
        sleep(&ctx.ct, interval).await?;
        if ctx.ct.is_cancelled() {
            return Err(Cancelled);
        }
        if let Some(token) = &token {
            let param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                .with_total(f64::from(steps))
                .with_message(format!("{what} {step} of {steps}"));
            if let Err(error) = ctx.peer.notify_progress(param).await {
                tracing::debug!(%error, "progress notification not sent");
            }
        }
    }
    Ok(())
}
