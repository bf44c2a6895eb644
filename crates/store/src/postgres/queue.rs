//! The run queue in PostgreSQL (migration `0003_queue.sql`): queueing a run (and waking
//! the workers that listen), claiming the oldest queued run in one statement
//! (`FOR UPDATE SKIP LOCKED`, so workers never wait on each other's claims), renewing and
//! releasing a lease, and the reaper, which turns runs whose lease expired into
//! `interrupted` and queues a run resuming each; the scheduler's lock and its fires
//! (migration `0004_schedule_fires.sql`).

use super::migrations::SCHEDULER_LOCK;
use super::{Postgres, col, json_text};
use crate::codec::{decode, now};
use crate::error::{Error, Result};
use crate::queue::Queue;
use crate::queue::{CHANNEL, Leadership, Listener, MAX_ATTEMPTS, Reaped};
use crate::runs::{RecordStatus, RunRecord};
use postgres::fallible_iterator::FallibleIterator as _;
use postgres::{Client, NoTls};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the listening thread looks whether its [`Listener`] was dropped.
const LISTEN_TICK: Duration = Duration::from_millis(250);

/// A duration as whole milliseconds for SQL (`$n * interval '1 millisecond'`).
fn millis(lease: Duration) -> f64 {
    lease.as_secs_f64() * 1000.0
}

/// Inserts queued run `id` and announces it, in transaction `tx` (the announcement is
/// delivered when it commits, so a woken worker finds the run).
fn insert_queued(
    tx: &mut postgres::Transaction<'_>,
    id: &str,
    blueprint: &str,
    text: &str,
    action: &'static str,
) -> Result<()> {
    let added = tx
        .execute(
            "INSERT INTO runs (id, blueprint, status, record, queued_at)
             VALUES ($1, $2, 'queued', $3::text::json, now()) ON CONFLICT (id) DO NOTHING",
            &[&id, &blueprint, &text],
        )
        .map_err(Error::pg(action))?;
    if added == 0 {
        return Err(Error::RunExists { id: id.to_owned() });
    }
    tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &id]).map_err(Error::pg(action))?;
    Ok(())
}

impl Postgres {
    /// Connects with `config` on a thread of its own named `name` (the `postgres` client
    /// enters a runtime of its own, which must not happen on a caller's runtime thread) and
    /// runs `setup` there. When it answers `true` the thread goes on with `keep`, which
    /// holds the connection until the returned [`Listener`] is dropped (it sets the flag
    /// `keep` is given); `false` closes the connection and answers `None`.
    fn on_own_connection(
        &self,
        config: postgres::Config,
        name: &str,
        action: &'static str,
        setup: impl FnOnce(&mut Client) -> Result<bool> + Send + 'static,
        keep: impl FnOnce(&mut Client, &AtomicBool) + Send + 'static,
    ) -> Result<Option<Listener>> {
        let url = self.shown.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let (ready, answered) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let set_up = config
                    .connect(NoTls)
                    .map_err(|source| Error::Connect { url, source })
                    .and_then(|mut client| Ok((setup(&mut client)?, client)));
                match set_up {
                    Ok((true, mut client)) => {
                        let _ = ready.send(Ok(true));
                        keep(&mut client, &stopped);
                    }
                    Ok((false, _)) => {
                        let _ = ready.send(Ok(false));
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                    }
                }
            })
            .map_err(|e| Error::ConnectionGone { action, detail: format!("its thread cannot start: {e}") })?;
        let guard = Listener::new(stop, thread);
        match answered.recv() {
            Ok(Ok(true)) => Ok(Some(guard)),
            Ok(Ok(false)) => Ok(None),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                Err(Error::ConnectionGone { action, detail: "its thread stopped before it connected".to_owned() })
            }
        }
    }
}

impl Queue for Postgres {
    fn enqueue(&self, record: &RunRecord) -> Result<()> {
        let action = "queueing a run";
        let text = json_text(|| format!("the record of run `{}`", record.id), record)?;
        let (id, blueprint) = (record.id.clone(), record.blueprint.clone());
        self.call(action, move |client| {
            let mut tx = client.transaction().map_err(Error::pg(action))?;
            insert_queued(&mut tx, &id, &blueprint, &text, action)?;
            tx.commit().map_err(Error::pg(action))
        })
    }

    fn enqueue_fire(&self, record: &RunRecord, slot: &str) -> Result<bool> {
        let action = "queueing a scheduled run";
        let text = json_text(|| format!("the record of run `{}`", record.id), record)?;
        let (id, blueprint, slot) = (record.id.clone(), record.blueprint.clone(), slot.to_owned());
        self.call(action, move |client| {
            let mut tx = client.transaction().map_err(Error::pg(action))?;
            let fired = tx
                .execute(
                    "INSERT INTO schedule_fires (blueprint, slot, run_id) VALUES ($1, $2::text::timestamptz, $3)
                     ON CONFLICT (blueprint, slot) DO NOTHING",
                    &[&blueprint, &slot, &id],
                )
                .map_err(Error::pg(action))?;
            if fired == 0 {
                return Ok(false);
            }
            insert_queued(&mut tx, &id, &blueprint, &text, action)?;
            tx.commit().map_err(Error::pg(action))?;
            Ok(true)
        })
    }

    fn in_flight(&self) -> Result<Vec<String>> {
        let action = "reading the runs in flight";
        self.call(action, move |client| {
            let rows = client
                .query("SELECT DISTINCT blueprint FROM runs WHERE status IN ('queued', 'running')", &[])
                .map_err(Error::pg(action))?;
            rows.iter().map(|row| col(row, 0, action)).collect()
        })
    }

    fn lead(&self) -> Result<Option<Leadership>> {
        let action = "taking the scheduler's lock";
        let mut config = self.config.clone();
        // So `pg_stat_activity` tells which process leads.
        config.application_name(&format!("mcpflow scheduler {}", std::process::id()));
        let lost = Arc::new(AtomicBool::new(false));
        let losing = lost.clone();
        let held = self.on_own_connection(
            config,
            "mcpflow-store-lead",
            action,
            move |client| {
                let row = client
                    .query_one("SELECT pg_try_advisory_lock($1)", &[&SCHEDULER_LOCK])
                    .map_err(Error::pg(action))?;
                col::<bool>(&row, 0, action)
            },
            move |client, stop| hold(client, stop, &losing),
        )?;
        Ok(held.map(|guard| Leadership::new(lost, guard)))
    }

    fn claim(&self, owner: &str, lease: Duration) -> Result<Option<RunRecord>> {
        let action = "claiming a queued run";
        let owner = owner.to_owned();
        self.call(action, move |client| {
            let row = client
                .query_opt(
                    "UPDATE runs SET status = 'running', lease_owner = $1,
                         lease_until = now() + $2 * interval '1 millisecond', attempts = attempts + 1
                     WHERE id = (SELECT id FROM runs WHERE status = 'queued' ORDER BY queued_at, id
                                 LIMIT 1 FOR UPDATE SKIP LOCKED)
                     RETURNING id, record::text",
                    &[&owner, &millis(lease)],
                )
                .map_err(Error::pg(action))?;
            let Some(row) = row else { return Ok(None) };
            let id: String = col(&row, 0, action)?;
            let record: String = col(&row, 1, action)?;
            Ok(Some(decode("runs", id.as_bytes(), record.as_bytes())?))
        })
    }

    fn renew(&self, run_id: &str, owner: &str, lease: Duration) -> Result<bool> {
        let action = "renewing a run's lease";
        let (run_id, owner) = (run_id.to_owned(), owner.to_owned());
        self.call(action, move |client| {
            let renewed = client
                .execute(
                    "UPDATE runs SET lease_until = now() + $3 * interval '1 millisecond'
                     WHERE id = $1 AND lease_owner = $2 AND status IN ('running', 'waiting')",
                    &[&run_id, &owner, &millis(lease)],
                )
                .map_err(Error::pg(action))?;
            Ok(renewed > 0)
        })
    }

    fn release(&self, run_id: &str, owner: &str) -> Result<()> {
        let action = "releasing a run's lease";
        let (run_id, owner) = (run_id.to_owned(), owner.to_owned());
        self.call(action, move |client| {
            client
                .execute(
                    "UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2",
                    &[&run_id, &owner],
                )
                .map_err(Error::pg(action))?;
            Ok(())
        })
    }

    fn reap(&self) -> Result<Vec<Reaped>> {
        let action = "reaping runs whose lease expired";
        self.call(action, move |client| {
            let mut tx = client.transaction().map_err(Error::pg(action))?;
            let rows = tx
                .query(
                    "SELECT id, record::text, attempts FROM runs
                     WHERE lease_until < now() AND status IN ('running', 'waiting')
                     ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED",
                    &[],
                )
                .map_err(Error::pg(action))?;
            let mut reaped = Vec::new();
            for row in &rows {
                let id: String = col(row, 0, action)?;
                let attempts: i32 = col(row, 2, action)?;
                let mut record: RunRecord = decode("runs", id.as_bytes(), col::<String>(row, 1, action)?.as_bytes())?;
                record.status = RecordStatus::Interrupted;
                record.finished_at = Some(now());
                let text = json_text(|| format!("the record of run `{id}`"), &record)?;
                tx.execute(
                    "UPDATE runs SET status = 'interrupted', record = $2::text::json, lease_owner = NULL,
                         lease_until = NULL WHERE id = $1",
                    &[&id, &text],
                )
                .map_err(Error::pg(action))?;
                let again = (attempts < MAX_ATTEMPTS && record.definition.is_some()).then(|| resuming(&record));
                if let Some(next) = &again {
                    let text = json_text(|| format!("the record of run `{}`", next.id), next)?;
                    tx.execute(
                        "INSERT INTO runs (id, blueprint, status, record, queued_at, attempts)
                         VALUES ($1, $2, 'queued', $3::text::json, now(), $4)",
                        &[&next.id, &next.blueprint, &text, &attempts],
                    )
                    .map_err(Error::pg(action))?;
                    tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &next.id]).map_err(Error::pg(action))?;
                }
                reaped.push(Reaped { interrupted: id, resumed_by: again.map(|next| next.id), attempts });
            }
            tx.commit().map_err(Error::pg(action))?;
            Ok(reaped)
        })
    }

    fn listen(&self, on_queued: Box<dyn Fn() + Send>) -> Result<Listener> {
        let action = "listening for queued runs";
        let listening = self.on_own_connection(
            self.config.clone(),
            "mcpflow-store-listen",
            action,
            move |client| {
                client.batch_execute(&format!("LISTEN {CHANNEL}")).map_err(Error::pg(action))?;
                Ok(true)
            },
            move |client, stop| hear(client, &on_queued, stop),
        )?;
        listening.ok_or_else(|| Error::ConnectionGone { action, detail: "it was not kept".to_owned() })
    }

    fn ping(&self) -> Result<()> {
        let action = "checking the connection";
        self.call(action, move |client| client.simple_query("SELECT 1").map(drop).map_err(Error::pg(action)))
    }
}

/// Calls `on_queued` for each notification until `stop` is set or the connection breaks
/// (then the workers still poll).
fn hear(client: &mut Client, on_queued: &(dyn Fn() + Send), stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        let mut notifications = client.notifications();
        let mut heard = notifications.timeout_iter(LISTEN_TICK);
        loop {
            match heard.next() {
                Ok(Some(_)) => on_queued(),
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(%error, "stopped listening for queued runs; workers still poll the queue");
                    return;
                }
            }
        }
    }
}

/// Keeps the scheduler's lock until `stop` is set; sets `lost` when the connection no
/// longer answers (the lock is gone with it).
fn hold(client: &mut Client, stop: &AtomicBool, lost: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        std::thread::sleep(LISTEN_TICK);
        if let Err(error) = client.simple_query("SELECT 1") {
            tracing::warn!(%error, "the scheduler's connection broke: this worker no longer fires the schedules");
            lost.store(true, Ordering::Release);
            return;
        }
    }
}

/// The queued run that resumes interrupted run `record`: the same blueprint and inputs.
fn resuming(record: &RunRecord) -> RunRecord {
    RunRecord {
        id: uuid::Uuid::now_v7().to_string(),
        status: RecordStatus::Queued,
        started_at: now(),
        finished_at: None,
        envelope: None,
        rerun_of: None,
        resumed_from: Some(record.id.clone()),
        paused_ms: None,
        ..record.clone()
    }
}
