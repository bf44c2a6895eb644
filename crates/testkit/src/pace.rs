//! Time inside tool calls: sleeps that end early on cancellation, and MCP progress notifications.

use std::time::Duration;

use rmcp::{RoleServer, model::ProgressNotificationParam, service::RequestContext};
use tokio_util::sync::CancellationToken;

/// The request was cancelled by the client (or the connection went away) while we waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cancelled;

/// Sleeps for `duration` unless `ct` is cancelled first.
pub(crate) async fn sleep(ct: &CancellationToken, duration: Duration) -> Result<(), Cancelled> {
    if duration.is_zero() {
        return Ok(());
    }
    tokio::select! {
        () = ct.cancelled() => Err(Cancelled),
        () = tokio::time::sleep(duration) => Ok(()),
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
