//! The scheduler loop (`mcpflow serve --schedule`, the studio, and the one leading
//! `mcpflow worker` of a team's store): fires the runs that stored blueprints' `schedule`
//! asks for. Decisions are the pure [`Planner`]'s; this loop feeds it the stored
//! blueprints, the clock and which blueprints have a run in flight (any run — scheduled,
//! from the studio or from an agent — so runs of one blueprint never overlap), starts
//! what is due, and keeps its state in the store so a fire missed while mcpflow was
//! closed runs once on the next start.
//!
//! [`run_schedules`] starts the runs in this process; [`queue_schedules`] queues them in
//! a store in PostgreSQL for the workers, each slot once ([`App::enqueue_fire`]), while
//! this process holds the scheduler's lock.

use crate::schedule::{Fire, Planner, ScheduleState, Trigger};
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
/// How often the queueing scheduler reads the stored blueprints again: other processes
/// save them, and their changes are not announced to this one.
const RELOAD_TICK: Duration = Duration::from_secs(5);

/// Where a fire's run goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Firing {
    /// Started in this process.
    Here,
    /// Queued for the workers, once per slot.
    Queue,
}

/// The scheduler's view of the stored blueprints.
#[derive(Debug, Default)]
struct Schedules {
    planner: Planner,
    /// Scheduled blueprints: their trigger text and the inputs for their runs.
    known: HashMap<String, (String, Map<String, Value>)>,
    /// Blueprints the planner was told have a run in flight.
    running: HashSet<String>,
}

/// Runs the scheduler until `stop` is cancelled, starting the runs in this process.
pub async fn run_schedules(app: App, stop: CancellationToken) {
    announce_unfinished(&app);
    schedule(app, stop, Firing::Here).await;
}

/// Runs the scheduler until `stop` is cancelled, queueing the runs in the store (a store
/// in PostgreSQL: [`App::enqueue_fire`]). Only the process holding the scheduler's lock
/// (`Store::lead_schedules`) calls it, and stops it when it loses the lock.
pub async fn queue_schedules(app: App, stop: CancellationToken) {
    schedule(app, stop, Firing::Queue).await;
}

/// Warns of the runs an earlier process left interrupted with tasks in flight, or waiting.
fn announce_unfinished(app: &App) {
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
}

async fn schedule(app: App, stop: CancellationToken, firing: Firing) {
    let mut changes = app.subscribe_changes();
    let mut s = Schedules::default();
    s.load(&app, Utc::now());
    let mut loaded = tokio::time::Instant::now();
    loop {
        let now = Utc::now();
        s.track_running(&app, firing);
        for fire in s.planner.due(now) {
            let inputs = s.known.get(&fire.blueprint).map(|(_, i)| i.clone()).unwrap_or_default();
            if fired(&app, &fire, Value::Object(inputs), firing) {
                s.planner.run_started(&fire.blueprint);
                s.running.insert(fire.blueprint.clone());
            }
        }
        s.persist(&app);
        let wait = match s.planner.next_wake(now) {
            Some(at) => (at - now).to_std().unwrap_or(Duration::ZERO).min(IDLE_TICK),
            None => IDLE_TICK,
        };
        let wait = if s.running.is_empty() { wait } else { wait.min(BUSY_TICK) };
        let wait = if firing == Firing::Queue { wait.min(RELOAD_TICK) } else { wait };
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(wait) => {}
            change = changes.recv() => match change {
                Ok(Change::Blueprints) | Err(RecvError::Lagged(_)) => s.load(&app, Utc::now()),
                Ok(_) => {}
                Err(RecvError::Closed) => break,
            },
        }
        if firing == Firing::Queue && loaded.elapsed() >= RELOAD_TICK {
            s.load(&app, Utc::now());
            loaded = tokio::time::Instant::now();
        }
    }
    s.persist(&app);
}

/// Starts or queues the run of `fire`; whether a run of it is now in flight.
fn fired(app: &App, fire: &Fire, inputs: Value, firing: Firing) -> bool {
    let blueprint = &fire.blueprint;
    match firing {
        Firing::Here => {
            let spec = StartRun::new(Target::Stored(blueprint.clone()), inputs, RunTrigger::Schedule);
            match app.start_run(spec) {
                Ok(started) => {
                    tracing::info!(%blueprint, run = %started.run_id, reason = ?fire.reason, "scheduled run started");
                    tokio::spawn(announce_questions(started.run_id, started.events));
                    true
                }
                Err(e) => {
                    tracing::warn!(%blueprint, code = e.code(), error = %e, "a scheduled run could not start");
                    false
                }
            }
        }
        Firing::Queue => {
            let slot = fire.scheduled_for.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            match app.enqueue_fire(blueprint, inputs, &slot) {
                Ok(Some(run)) => {
                    tracing::info!(%blueprint, %run, %slot, reason = ?fire.reason, "scheduled run queued");
                    true
                }
                Ok(None) => {
                    tracing::info!(%blueprint, %slot, "this slot was fired already (by the scheduler before this one)");
                    false
                }
                Err(e) => {
                    tracing::warn!(%blueprint, %slot, code = e.code(), error = %e, "a scheduled run could not be queued");
                    false
                }
            }
        }
    }
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

    /// Tells the planner which blueprints have a run in flight, whoever started it (in
    /// this process, or on any worker when the runs are queued).
    fn track_running(&mut self, app: &App, firing: Firing) {
        let active: HashSet<String> = match firing {
            Firing::Here => app.active_runs().into_iter().map(|(_, bp)| bp).collect(),
            Firing::Queue => match app.store().blueprints_in_flight() {
                Ok(blueprints) => blueprints.into_iter().collect(),
                Err(e) => {
                    tracing::warn!(error = %e, "could not read the runs in flight; the schedules wait");
                    return;
                }
            },
        };
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
