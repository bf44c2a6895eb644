//! Runs and their events in sled: `runs` (records by id), `runs_by_blueprint` (an index,
//! written and removed with the record in one transaction) and `events` (by run and
//! `seq`).

use super::{Sled, tx_error};
use crate::backend::{Change, Runs};
use crate::codec::{decode, encode_named};
use crate::error::{Error, Result};
use crate::keys::{self, EVENTS, RUN_INDEX, RUNS};
use crate::runs::{RecordStatus, RunList, RunRecord};
use crate::unreadable::Unreadable;
use mcpflow_engine::RunEvent;
use sled::Transactional;
use sled::transaction::ConflictableTransactionError;

/// A `runs` entry read back, or why it cannot be, naming the run its key names.
fn read_record(key: &[u8], bytes: &[u8]) -> std::result::Result<RunRecord, Unreadable> {
    decode(RUNS, key, bytes).map_err(|e| Unreadable::record(Unreadable::id_of_record_key(key), &e))
}

/// How a `waiting` record reads in its JSON (for `waiting_runs`' first look).
const WAITING: &[u8] = br#""status":"waiting""#;

impl Runs for Sled {
    fn begin_run(&self, record: &RunRecord) -> Result<()> {
        let key = keys::single(&record.id);
        let index_key = keys::pair(&record.blueprint, record.id.as_bytes());
        let value = encode_named(|| format!("the record of run `{}`", record.id), record)?;
        let result = (&self.runs, &self.run_index).transaction(|(runs, index)| {
            if runs.get(&key)?.is_some() {
                return Err(ConflictableTransactionError::Abort(Error::RunExists { id: record.id.clone() }));
            }
            runs.insert(key.as_slice(), value.as_slice())?;
            index.insert(index_key.as_slice(), &[])?;
            Ok(())
        });
        result.map_err(tx_error("recording a run"))
    }

    fn append_event(&self, run_id: &str, event: &RunEvent) -> Result<()> {
        if !self.runs.contains_key(keys::single(run_id)).map_err(Error::db("appending an event"))? {
            return Err(Error::RunNotFound { id: run_id.to_owned() });
        }
        let value = encode_named(|| format!("event {} of run `{run_id}`", event.seq), event)?;
        self.events.insert(keys::event(run_id, event.seq), value).map_err(Error::db("appending an event"))?;
        Ok(())
    }

    fn update_run(&self, run_id: &str, change: Change) -> Result<RunRecord> {
        let key = keys::single(run_id);
        let result = self.runs.transaction(|runs| {
            let abort = ConflictableTransactionError::Abort;
            let Some(bytes) = runs.get(&key)? else {
                return Err(abort(Error::RunNotFound { id: run_id.to_owned() }));
            };
            let before = decode::<RunRecord>(RUNS, &key, &bytes).map_err(abort)?;
            let mut record = before.clone();
            change(&mut record);
            let value = encode_named(|| format!("the record of run `{run_id}`"), &record).map_err(abort)?;
            runs.insert(key.as_slice(), value)?;
            Ok(before)
        });
        result.map_err(tx_error("updating a run"))
    }

    fn run_exists(&self, id: &str) -> Result<bool> {
        self.runs.contains_key(keys::single(id)).map_err(Error::db("reading runs"))
    }

    fn run(&self, id: &str) -> Result<Option<RunRecord>> {
        let key = keys::single(id);
        match self.runs.get(&key).map_err(Error::db("reading a run"))? {
            Some(bytes) => decode(RUNS, &key, &bytes)
                .map(Some)
                .map_err(|e| Error::Unreadable(Box::new(Unreadable::record(id.to_owned(), &e)))),
            None => Ok(None),
        }
    }

    fn run_list(&self, blueprint: Option<&str>, limit: usize) -> Result<RunList> {
        let mut list = RunList::default();
        let Some(blueprint) = blueprint else {
            for entry in self.runs.iter().rev() {
                if list.runs.len() >= limit {
                    break;
                }
                let (key, bytes) = entry.map_err(Error::db("listing runs"))?;
                match read_record(&key, &bytes) {
                    Ok(record) => list.runs.push(record),
                    Err(unreadable) => list.skipped.push(unreadable),
                }
            }
            return Ok(list);
        };
        for entry in self.run_index.scan_prefix(keys::prefix(blueprint)).keys().rev() {
            if list.runs.len() >= limit {
                break;
            }
            let key = entry.map_err(Error::db("listing runs"))?;
            let (_, tail) = keys::parse_pair(RUN_INDEX, &key)?;
            let run_id = keys::tail_text(RUN_INDEX, &key, tail)?;
            // Index and record are written and removed together; a gap is skipped, not fatal.
            match self.run(&run_id) {
                Ok(Some(record)) => list.runs.push(record),
                Ok(None) => tracing::debug!(run_id, "the run index names a run that is not recorded"),
                Err(Error::Unreadable(unreadable)) => list.skipped.push(*unreadable),
                Err(e) => return Err(e),
            }
        }
        Ok(list)
    }

    fn waiting_runs(&self) -> Result<Vec<RunRecord>> {
        let mut found = Vec::new();
        for entry in self.runs.iter() {
            let (key, bytes) = entry.map_err(Error::db("looking for waiting runs"))?;
            // Cheap first look: the status is in the JSON as written.
            if !bytes.windows(WAITING.len()).any(|w| w == WAITING) {
                continue;
            }
            match decode::<RunRecord>(RUNS, &key, &bytes) {
                Ok(record) if record.status == RecordStatus::Waiting => found.push(record),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "skipping a damaged run record"),
            }
        }
        Ok(found)
    }

    fn unfinished_runs(&self) -> Result<(Vec<RunRecord>, Vec<Unreadable>)> {
        let (mut runs, unreadable) = self.all_runs()?;
        runs.retain(|record| matches!(record.status, RecordStatus::Running | RecordStatus::Waiting));
        Ok((runs, unreadable))
    }

    fn all_runs(&self) -> Result<(Vec<RunRecord>, Vec<Unreadable>)> {
        let (mut runs, mut unreadable) = (Vec::new(), Vec::new());
        for entry in self.runs.iter() {
            let (key, bytes) = entry.map_err(Error::db("reading runs"))?;
            match read_record(&key, &bytes) {
                Ok(record) => runs.push(record),
                Err(skipped) => unreadable.push(skipped),
            }
        }
        Ok((runs, unreadable))
    }

    fn readable_events(&self, run_id: &str, after: u64) -> Result<(Vec<RunEvent>, Vec<Unreadable>)> {
        let (mut events, mut unreadable) = (Vec::new(), Vec::new());
        // The run's keys share its prefix and sort by `seq` (big-endian).
        let prefix = keys::prefix(run_id);
        let from = if after == 0 { prefix.clone() } else { keys::event(run_id, after.saturating_add(1)) };
        let run_events = self.events.range(from..).take_while(|e| !matches!(e, Ok((k, _)) if !k.starts_with(&prefix)));
        for entry in run_events {
            let (key, bytes) = entry.map_err(Error::db("reading events"))?;
            match decode(EVENTS, &key, &bytes) {
                Ok(event) => events.push(event),
                Err(e) => {
                    let seq = keys::parse_pair(EVENTS, &key).and_then(|(_, tail)| keys::tail_u64(EVENTS, &key, tail));
                    unreadable.push(Unreadable::event(run_id.to_owned(), seq.unwrap_or(0), &e));
                }
            }
        }
        Ok((events, unreadable))
    }

    fn delete_run(&self, id: &str) -> Result<bool> {
        let key = keys::single(id);
        let Some(bytes) = self.runs.get(&key).map_err(Error::db("reading a run"))? else {
            return Ok(false);
        };
        let index_keys = match decode::<RunRecord>(RUNS, &key, &bytes) {
            Ok(record) => vec![keys::pair(&record.blueprint, id.as_bytes())],
            // A damaged record can still be deleted: find its index entry by the run id.
            Err(_) => self.index_keys_of(id)?,
        };
        let result = (&self.runs, &self.run_index).transaction(|(runs, index)| {
            runs.remove(key.as_slice())?;
            for index_key in &index_keys {
                index.remove(index_key.as_slice())?;
            }
            Ok(())
        });
        result.map_err(tx_error("deleting a run"))?;
        // The record is gone first, so a crash here leaves only unreachable events.
        let mut batch = sled::Batch::default();
        for event_key in self.events.scan_prefix(keys::prefix(id)).keys() {
            batch.remove(event_key.map_err(Error::db("deleting events"))?);
        }
        self.events.apply_batch(batch).map_err(Error::db("deleting events"))?;
        Ok(true)
    }

    fn move_runs(&self, from: &str, to: &str, keep: &[String]) -> Result<u32> {
        let mut ids = Vec::new();
        for entry in self.run_index.scan_prefix(keys::prefix(from)).keys() {
            let key = entry.map_err(Error::db("listing runs"))?;
            let (_, tail) = keys::parse_pair(RUN_INDEX, &key)?;
            ids.push(keys::tail_text(RUN_INDEX, &key, tail)?);
        }
        let mut moved = 0;
        for id in ids.iter().filter(|id| !keep.contains(id)) {
            let Ok(Some(mut record)) = self.run(id) else { continue };
            record.blueprint = to.to_owned();
            let key = keys::single(id);
            let value = encode_named(|| format!("the record of run `{id}`"), &record)?;
            let (old, new) = (keys::pair(from, id.as_bytes()), keys::pair(to, id.as_bytes()));
            let result = (&self.runs, &self.run_index).transaction(|(runs, index)| {
                runs.insert(key.as_slice(), value.as_slice())?;
                index.remove(old.as_slice())?;
                index.insert(new.as_slice(), &[])?;
                Ok(())
            });
            result.map_err(tx_error("moving a run to another blueprint"))?;
            moved += 1;
        }
        Ok(moved)
    }

    fn resumed_by(&self, record: &RunRecord) -> Result<Option<String>> {
        let prefix = keys::prefix(&record.blueprint);
        for key in self.run_index.scan_prefix(&prefix).keys() {
            let key = key.map_err(Error::db("looking for the run that resumed a run"))?;
            let Some(id) = key.get(prefix.len()..).and_then(|id| std::str::from_utf8(id).ok()) else { continue };
            if id <= record.id.as_str() {
                continue;
            }
            // A later run that cannot be read resumed nothing we can know of.
            if let Ok(Some(later)) = self.run(id)
                && later.resumed_from.as_deref() == Some(record.id.as_str())
            {
                return Ok(Some(later.id));
            }
        }
        Ok(None)
    }
}

impl Sled {
    fn index_keys_of(&self, run_id: &str) -> Result<Vec<Vec<u8>>> {
        let mut found = Vec::new();
        for entry in self.run_index.iter().keys() {
            let key = entry.map_err(Error::db("reading the run index"))?;
            if let Ok((_, tail)) = keys::parse_pair(RUN_INDEX, &key)
                && tail == run_id.as_bytes()
            {
                found.push(key.to_vec());
            }
        }
        Ok(found)
    }
}
