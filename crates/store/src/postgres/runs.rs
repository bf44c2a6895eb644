//! Runs and their events in PostgreSQL: `runs` (the record, with its blueprint and status
//! beside it for queries) and `events` (by run and `seq`, removed with their run).

use super::{Postgres, col, json_text};
use crate::backend::{Change, Runs};
use crate::codec::decode;
use crate::error::{Error, Result};
use crate::runs::{RecordStatus, RunList, RunRecord};
use crate::unreadable::Unreadable;
use mcpflow_engine::RunEvent;
use postgres::Row;
use postgres::error::SqlState;

/// A record from a row of (id, record).
fn read(row: &Row, action: &'static str) -> Result<std::result::Result<RunRecord, Unreadable>> {
    let id: String = col(row, 0, action)?;
    let record: String = col(row, 1, action)?;
    Ok(decode("runs", id.as_bytes(), record.as_bytes()).map_err(|e| Unreadable::record(id, &e)))
}

/// The readable records of `rows` and the unreadable ones, in order.
fn split(rows: &[Row], action: &'static str) -> Result<(Vec<RunRecord>, Vec<Unreadable>)> {
    let (mut runs, mut unreadable) = (Vec::new(), Vec::new());
    for row in rows {
        match read(row, action)? {
            Ok(record) => runs.push(record),
            Err(skipped) => unreadable.push(skipped),
        }
    }
    Ok((runs, unreadable))
}

fn seq_of(run_id: &str, seq: u64) -> Result<i64> {
    i64::try_from(seq).map_err(|_| Error::InvalidValue {
        what: format!("event {seq} of run `{run_id}`"),
        message: "PostgreSQL stores event numbers up to 2^63 - 1".to_owned(),
    })
}

impl Runs for Postgres {
    fn begin_run(&self, record: &RunRecord) -> Result<()> {
        let action = "recording a run";
        let text = json_text(|| format!("the record of run `{}`", record.id), record)?;
        let (id, blueprint, status) = (record.id.clone(), record.blueprint.clone(), record.status.as_str());
        self.call(action, move |client| {
            let added = client
                .execute(
                    "INSERT INTO runs (id, blueprint, status, record) VALUES ($1, $2, $3, $4::text::json)
                     ON CONFLICT (id) DO NOTHING",
                    &[&id, &blueprint, &status, &text],
                )
                .map_err(Error::pg(action))?;
            if added == 0 { Err(Error::RunExists { id }) } else { Ok(()) }
        })
    }

    fn append_event(&self, run_id: &str, event: &RunEvent) -> Result<()> {
        let action = "appending an event";
        let text = json_text(|| format!("event {} of run `{run_id}`", event.seq), event)?;
        let (run_id, seq) = (run_id.to_owned(), seq_of(run_id, event.seq)?);
        self.call(action, move |client| {
            let written = client.execute(
                "INSERT INTO events (run_id, seq, event) VALUES ($1, $2, $3::text::json)
                 ON CONFLICT (run_id, seq) DO UPDATE SET event = EXCLUDED.event",
                &[&run_id, &seq, &text],
            );
            match written {
                Ok(_) => Ok(()),
                Err(e) if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) => Err(Error::RunNotFound { id: run_id }),
                Err(e) => Err(Error::pg(action)(e)),
            }
        })
    }

    fn update_run(&self, run_id: &str, change: Change) -> Result<RunRecord> {
        let action = "updating a run";
        let run_id = run_id.to_owned();
        self.call(action, move |client| {
            let mut tx = client.transaction().map_err(Error::pg(action))?;
            let row = tx
                .query_opt("SELECT record::text FROM runs WHERE id = $1 FOR UPDATE", &[&run_id])
                .map_err(Error::pg(action))?;
            let Some(row) = row else { return Err(Error::RunNotFound { id: run_id }) };
            let before: RunRecord = decode("runs", run_id.as_bytes(), col::<String>(&row, 0, action)?.as_bytes())?;
            let mut record = before.clone();
            change(&mut record);
            let text = json_text(|| format!("the record of run `{run_id}`"), &record)?;
            tx.execute(
                "UPDATE runs SET status = $2, record = $3::text::json WHERE id = $1",
                &[&run_id, &record.status.as_str(), &text],
            )
            .map_err(Error::pg(action))?;
            tx.commit().map_err(Error::pg(action))?;
            Ok(before)
        })
    }

    fn run_exists(&self, id: &str) -> Result<bool> {
        let action = "reading runs";
        let id = id.to_owned();
        self.call(action, move |client| {
            Ok(client.query_opt("SELECT 1 FROM runs WHERE id = $1", &[&id]).map_err(Error::pg(action))?.is_some())
        })
    }

    fn run(&self, id: &str) -> Result<Option<RunRecord>> {
        let action = "reading a run";
        let id = id.to_owned();
        self.call(action, move |client| {
            let row = client
                .query_opt("SELECT id, record::text FROM runs WHERE id = $1", &[&id])
                .map_err(Error::pg(action))?;
            match row {
                None => Ok(None),
                Some(row) => {
                    read(&row, action)?.map(Some).map_err(|unreadable| Error::Unreadable(Box::new(unreadable)))
                }
            }
        })
    }

    fn run_list(&self, blueprint: Option<&str>, limit: usize) -> Result<RunList> {
        let action = "listing runs";
        let blueprint = blueprint.map(str::to_owned);
        self.call(action, move |client| {
            let mut list = RunList::default();
            // Pages of the runs still wanted, so unreadable ones do not count against `limit`.
            let mut before: Option<String> = None;
            while list.runs.len() < limit {
                let wanted = i64::try_from(limit - list.runs.len()).unwrap_or(i64::MAX);
                let rows = client
                    .query(
                        "SELECT id, record::text FROM runs
                         WHERE ($1::text IS NULL OR blueprint = $1) AND ($2::text IS NULL OR id < $2)
                         ORDER BY id DESC LIMIT $3",
                        &[&blueprint, &before, &wanted],
                    )
                    .map_err(Error::pg(action))?;
                for row in &rows {
                    match read(row, action)? {
                        Ok(record) => list.runs.push(record),
                        Err(unreadable) => list.skipped.push(unreadable),
                    }
                }
                match rows.last() {
                    Some(last) if i64::try_from(rows.len()).is_ok_and(|n| n == wanted) => {
                        before = Some(col(last, 0, action)?)
                    }
                    _ => break,
                }
            }
            Ok(list)
        })
    }

    fn waiting_runs(&self) -> Result<Vec<RunRecord>> {
        let action = "looking for waiting runs";
        self.call(action, move |client| {
            let rows = client
                .query("SELECT id, record::text FROM runs WHERE status = 'waiting' ORDER BY id", &[])
                .map_err(Error::pg(action))?;
            let (runs, unreadable) = split(&rows, action)?;
            for skipped in unreadable {
                tracing::warn!(unreadable = %skipped, "skipping a damaged run record");
            }
            Ok(runs.into_iter().filter(|record| record.status == RecordStatus::Waiting).collect())
        })
    }

    fn unfinished_runs(&self) -> Result<(Vec<RunRecord>, Vec<Unreadable>)> {
        let action = "looking for interrupted runs";
        self.call(action, move |client| {
            let rows = client
                .query("SELECT id, record::text FROM runs WHERE status IN ('running', 'waiting') ORDER BY id", &[])
                .map_err(Error::pg(action))?;
            split(&rows, action)
        })
    }

    fn all_runs(&self) -> Result<(Vec<RunRecord>, Vec<Unreadable>)> {
        let action = "reading runs";
        self.call(action, move |client| {
            let rows = client.query("SELECT id, record::text FROM runs ORDER BY id", &[]).map_err(Error::pg(action))?;
            split(&rows, action)
        })
    }

    fn readable_events(&self, run_id: &str, after: u64) -> Result<(Vec<RunEvent>, Vec<Unreadable>)> {
        let action = "reading events";
        let run_id = run_id.to_owned();
        // 0 is every event (seq 0 included); else the ones after it.
        let after = if after == 0 { i64::MIN } else { i64::try_from(after).unwrap_or(i64::MAX) };
        self.call(action, move |client| {
            let rows = client
                .query(
                    "SELECT seq, event::text FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq",
                    &[&run_id, &after],
                )
                .map_err(Error::pg(action))?;
            let (mut events, mut unreadable) = (Vec::new(), Vec::new());
            for row in &rows {
                let seq: i64 = col(row, 0, action)?;
                let text: String = col(row, 1, action)?;
                match decode("events", format!("{run_id}/{seq}").as_bytes(), text.as_bytes()) {
                    Ok(event) => events.push(event),
                    Err(e) => unreadable.push(Unreadable::event(run_id.clone(), u64::try_from(seq).unwrap_or(0), &e)),
                }
            }
            Ok((events, unreadable))
        })
    }

    fn delete_run(&self, id: &str) -> Result<bool> {
        let action = "deleting a run";
        let id = id.to_owned();
        self.call(action, move |client| {
            // Its events go with it (`ON DELETE CASCADE`).
            Ok(client.execute("DELETE FROM runs WHERE id = $1", &[&id]).map_err(Error::pg(action))? > 0)
        })
    }

    fn move_runs(&self, from: &str, to: &str, keep: &[String]) -> Result<u32> {
        let action = "moving runs to another blueprint";
        let (from, to, keep) = (from.to_owned(), to.to_owned(), keep.to_vec());
        self.call(action, move |client| {
            let rows = client
                .query("SELECT id, record::text FROM runs WHERE blueprint = $1 ORDER BY id", &[&from])
                .map_err(Error::pg(action))?;
            let mut moved = 0;
            for row in &rows {
                let Ok(mut record) = read(row, action)? else { continue };
                if keep.contains(&record.id) {
                    continue;
                }
                record.blueprint.clone_from(&to);
                let text = json_text(|| format!("the record of run `{}`", record.id), &record)?;
                client
                    .execute(
                        "UPDATE runs SET blueprint = $2, record = $3::text::json WHERE id = $1",
                        &[&record.id, &to, &text],
                    )
                    .map_err(Error::pg(action))?;
                moved += 1;
            }
            Ok(moved)
        })
    }

    fn resumed_by(&self, record: &RunRecord) -> Result<Option<String>> {
        let action = "looking for the run that resumed a run";
        let (blueprint, id) = (record.blueprint.clone(), record.id.clone());
        self.call(action, move |client| {
            let rows = client
                .query(
                    "SELECT id, record::text FROM runs
                     WHERE blueprint = $1 AND id > $2 AND record ->> 'resumed_from' = $2 ORDER BY id",
                    &[&blueprint, &id],
                )
                .map_err(Error::pg(action))?;
            // A later run that cannot be read resumed nothing we can know of.
            for row in &rows {
                if let Ok(later) = read(row, action)?
                    && later.resumed_from.as_deref() == Some(id.as_str())
                {
                    return Ok(Some(later.id));
                }
            }
            Ok(None)
        })
    }
}
