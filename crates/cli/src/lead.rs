//! The one scheduler of a team's workers (issue 34): every `mcpflow worker` tries to take
//! the scheduler's lock (`Store::lead_schedules`, a PostgreSQL advisory lock); the one
//! holding it fires the stored blueprints' schedules into the queue
//! ([`mcpflow_service::daemon::queue_schedules`]), each slot once. When that worker dies
//! its connection closes, the lock is free, and another worker takes it over within a
//! `--poll` and goes on from the schedule states the first one saved.

use mcpflow_app::App;
use mcpflow_store::Store;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a leading worker checks it still holds the lock.
const HELD_TICK: Duration = Duration::from_millis(250);

/// Leads the schedules whenever no other worker does, until `stop` is cancelled.
#[allow(clippy::print_stderr)]
pub async fn lead(app: App, store: Store, stop: CancellationToken, poll: Duration) {
    while !stop.is_cancelled() {
        let taken = {
            let store = store.clone();
            let asked = tokio::task::spawn_blocking(move || store.lead_schedules()).await;
            asked.map_err(|e| e.to_string()).and_then(|answer| answer.map_err(|e| e.to_string()))
        };
        match taken {
            Ok(Some(leadership)) => {
                eprintln!("this worker fires the schedules");
                let led = stop.child_token();
                let watch = {
                    let led = led.clone();
                    tokio::spawn(async move {
                        while leadership.held() && !led.is_cancelled() {
                            tokio::select! {
                                () = tokio::time::sleep(HELD_TICK) => {}
                                () = led.cancelled() => {}
                            }
                        }
                        led.cancel();
                        // Letting go joins the lock's thread: not on the runtime's.
                        let _ = tokio::task::spawn_blocking(move || drop(leadership)).await;
                    })
                };
                mcpflow_service::daemon::queue_schedules(app.clone(), led.clone()).await;
                led.cancel();
                let _ = watch.await;
                if !stop.is_cancelled() {
                    eprintln!("this worker no longer fires the schedules (its connection to the database broke)");
                }
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "could not ask for the scheduler's lock; asking again"),
        }
        tokio::select! {
            () = tokio::time::sleep(poll) => {}
            () = stop.cancelled() => {}
        }
    }
}
