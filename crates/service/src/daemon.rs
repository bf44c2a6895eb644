//! The scheduler loop (`mcpflow serve --schedule`, and the studio): fires the runs that
//! stored blueprints' `schedule` asks for. Decisions are the pure [`Planner`]'s; this loop
//! feeds it the stored blueprints, the clock and which blueprints have a run in flight
//! (any run — scheduled, from the studio or from an agent — so runs of one blueprint
//! never overlap), starts what is due, and keeps its state in the store so a fire
//! missed while mcpflow was closed runs once on the next start.

use crate::schedule::{Planner, ScheduleState, Trigger};
use chrono::{DateTime, Utc};
use mcpflow_app::app::{App, Change};
use mcpflow_app::runs::{StartRun, Target, Trigger as RunTrigger, waiting_note};
use mcpflow_blueprint::{Options, check_value};
use mcpflow_engine::{EventKind, RunEvent};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;

/// How often the loop looks again while a run is in flight (to see it end).
const BUSY_TICK: Duration = Duration::from_millis(250);
/// The longest sleep, so a changed clock is noticed.
const IDLE_TICK: Duration = Duration::from_secs(60);

/// The scheduler's view of the stored blueprints.
#[derive(Debug, Default)]
struct Schedules {
    planner: Planner,
    /// Scheduled blueprints: their trigger text and the inputs for their runs.
    known: HashMap<String, (String, Map<String, Value>)>,
    /// Blueprints the planner was told have a run in flight.
    running: HashSet<String>,
}

/// Runs the scheduler until `stop` is cancelled.
pub async fn run_schedules(app: App, stop: CancellationToken) {
    for (run, tasks) in app.resumable() {
        let ids: Vec<&str> = tasks.iter().map(|t| t.task_id.as_str()).collect();
        tracing::warn!(
            run = %run,
            tasks = ?ids,
            "a run was interrupted with tasks in flight; `mcpflow resume {run}` polls them again (the tool is not called twice)"
        );
    }
    for note in app.waiting_notes() {
        tracing::warn!("{note}");
    }
    let mut changes = app.subscribe_changes();
    let mut s = Schedules::default();
    s.load(&app, Utc::now());
    loop {
        let now = Utc::now();
        s.track_running(&app);
        for fire in s.planner.due(now) {
            let inputs = s.known.get(&fire.blueprint).map(|(_, i)| i.clone()).unwrap_or_default();
            let spec =
                StartRun::new(Target::Stored(fire.blueprint.clone()), Value::Object(inputs), RunTrigger::Schedule);
            match app.start_run(spec) {
                Ok(started) => {
                    tracing::info!(blueprint = %fire.blueprint, run = %started.run_id, reason = ?fire.reason, "scheduled run started");
                    s.planner.run_started(&fire.blueprint);
                    s.running.insert(fire.blueprint.clone());
                    tokio::spawn(announce_questions(started.run_id, started.events));
                }
                Err(e) => {
                    tracing::warn!(blueprint = %fire.blueprint, code = e.code(), error = %e, "a scheduled run could not start");
                }
            }
        }
        s.persist(&app);
        let wait = match s.planner.next_wake(now) {
            Some(at) => (at - now).to_std().unwrap_or(Duration::ZERO).min(IDLE_TICK),
            None => IDLE_TICK,
        };
        let wait = if s.running.is_empty() { wait } else { wait.min(BUSY_TICK) };
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(wait) => {}
            change = changes.recv() => match change {
                Ok(Change::Blueprints) | Err(RecvError::Lagged(_)) => s.load(&app, Utc::now()),
                Ok(_) => {}
                Err(RecvError::Closed) => break,
            },
        }
    }
    s.persist(&app);
}

/// Logs each question a scheduled run comes to, with the command that answers it: nobody
/// else is there to see the run wait.
async fn announce_questions(run: String, mut events: broadcast::Receiver<Arc<RunEvent>>) {
    loop {
        match events.recv().await {
            Ok(event) => {
                if let EventKind::StepWaiting { question, .. } = &event.kind {
                    tracing::warn!("{}", waiting_note(&run, question));
                }
            }
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => break,
        }
    }
}

impl Schedules {
    /// Reads the schedules of the stored blueprints: new ones resume their stored state,
    /// changed ones start fresh, removed ones are dropped.
    fn load(&mut self, app: &App, now: DateTime<Utc>) {
        let mut seen = HashSet::new();
        for meta in app.blueprints().unwrap_or_default() {
            let Ok(Some(stored)) = app.store().blueprint(&meta.id) else { continue };
            let Some(bp) = check_value(stored.json, &Options::default()).blueprint else { continue };
            let Some(schedule) = &bp.schedule else { continue };
            let trigger = match Trigger::from_schedule(schedule) {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(blueprint = %bp.id, error = %e, "the schedule is not valid; it does not fire");
                    continue;
                }
            };
            let text = trigger.to_string();
            seen.insert(bp.id.clone());
            let inputs = schedule.inputs.clone().unwrap_or_default();
            if self.known.get(&bp.id).is_some_and(|(t, _)| *t == text) {
                self.known.insert(bp.id.clone(), (text, inputs));
                continue;
            }
            if !self.known.contains_key(&bp.id)
                && let Ok(Some(state)) = app.store().schedule_state(&bp.id)
                && let Ok(state) = serde_json::from_value::<ScheduleState>(state)
            {
                self.planner.restore(&bp.id, state);
            }
            self.planner.upsert(&bp.id, trigger, now);
            self.known.insert(bp.id.clone(), (text, inputs));
        }
        let gone: Vec<String> = self.known.keys().filter(|id| !seen.contains(*id)).cloned().collect();
        for id in gone {
            self.planner.remove(&id);
            self.known.remove(&id);
        }
    }

    /// Tells the planner which blueprints have a run in flight, whoever started it.
    fn track_running(&mut self, app: &App) {
        let active: HashSet<String> = app.active_runs().into_iter().map(|(_, bp)| bp).collect();
        for id in active.difference(&self.running) {
            self.planner.run_started(id);
        }
        for id in self.running.difference(&active) {
            self.planner.run_finished(id);
        }
        self.running = active;
    }

    /// Saves the states that changed.
    fn persist(&mut self, app: &App) {
        for (id, state) in self.planner.take_changed() {
            let written = match state {
                Some(state) => match serde_json::to_value(&state) {
                    Ok(v) => app.store().put_schedule_state(&id, &v),
                    Err(_) => continue,
                },
                None => app.store().delete_schedule_state(&id).map(|_| ()),
            };
            if let Err(e) = written {
                tracing::warn!(blueprint = %id, error = %e, "could not save the schedule state");
            }
        }
    }
}
