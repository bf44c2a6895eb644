//! A team's service (`mcpflow service --db URL --listen ADDR`): the studio's engine on a
//! store in PostgreSQL that workers and other front doors share. What they change is
//! not announced to this process, so [`watch`] reads the store and announces it to the
//! studios connected here: a run that started elsewhere (a worker claimed it), which
//! they then follow from its journal, and blueprints saved elsewhere.

use mcpflow_app::{App, Change};
use std::collections::HashSet;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the store is read again.
const TICK: Duration = Duration::from_millis(300);
/// The newest runs looked at on each tick.
const RECENT_RUNS: usize = 100;

/// Announces, until `stop`, the runs other processes start and the blueprints they save.
pub async fn watch(app: App, stop: CancellationToken) {
    let mut seen = Seen::default();
    // What is there at the start is not news.
    seen.look(&app, false);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(TICK) => {}
        }
        seen.look(&app, true);
    }
}

/// What the watcher has seen so far.
#[derive(Debug, Default)]
struct Seen {
    /// Runs seen in flight (among the newest).
    runs: HashSet<String>,
    /// Every blueprint's id and latest revision.
    blueprints: Vec<(String, u32)>,
}

impl Seen {
    /// Reads the store; announces (when `announce`) what is new since the last look.
    fn look(&mut self, app: &App, announce: bool) {
        let here: HashSet<String> = app.active_runs().into_iter().map(|(id, _)| id).collect();
        match app.store().runs(None, RECENT_RUNS) {
            Ok(records) => {
                let mut going = HashSet::new();
                for record in records {
                    let in_flight = matches!(
                        record.status,
                        mcpflow_store::RecordStatus::Running | mcpflow_store::RecordStatus::Waiting
                    );
                    if !in_flight {
                        continue;
                    }
                    if announce && !self.runs.contains(&record.id) && !here.contains(&record.id) {
                        app.announce(Change::RunStarted {
                            run_id: record.id.clone(),
                            blueprint: record.blueprint.clone(),
                            trigger: record.trigger.clone(),
                            client: record.client.clone(),
                        });
                    }
                    going.insert(record.id);
                }
                self.runs = going;
            }
            Err(error) => tracing::warn!(%error, "reading the team's runs failed; trying again"),
        }
        match app.store().blueprints() {
            Ok(list) => {
                let now: Vec<(String, u32)> = list.into_iter().map(|b| (b.id, b.rev)).collect();
                if announce && now != self.blueprints {
                    app.announce(Change::Blueprints);
                }
                self.blueprints = now;
            }
            Err(error) => tracing::warn!(%error, "reading the team's blueprints failed; trying again"),
        }
    }
}
