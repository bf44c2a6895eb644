//! An import's planned entries written to sled: every value encoded first (so a value
//! that cannot be stored fails before anything is written), then one batch per tree, the
//! data before what points at it (revisions before blueprints, events before runs).

use super::Sled;
use crate::backup::Writes;
use crate::codec::encode;
use crate::error::{Error, Result};
use crate::keys;
use sled::Batch;

pub(super) fn apply(sled: &Sled, writes: Writes) -> Result<()> {
    let mut batches: [Batch; 9] = Default::default();
    let [revisions, blueprints, events, runs, run_index, saved, servers, consents, schedules] = &mut batches;
    for (id, rev, revision) in &writes.revisions {
        revisions.insert(keys::revision(id, *rev), encode("a revision", revision)?);
    }
    for meta in &writes.blueprints {
        blueprints.insert(keys::single(&meta.id), encode("a blueprint meta", meta)?);
    }
    for (record, record_events) in &writes.runs {
        for event in record_events {
            events.insert(keys::event(&record.id, event.seq), encode("an event", event)?);
        }
        runs.insert(keys::single(&record.id), encode("a run record", record)?);
        run_index.insert(keys::pair(&record.blueprint, record.id.as_bytes()), &[]);
    }
    for (blueprint, name, value) in &writes.saved {
        saved.insert(keys::pair(blueprint, name.as_bytes()), encode("an imported value", value)?);
    }
    for (name, config) in &writes.servers {
        servers.insert(keys::single(name), encode("an imported value", config)?);
    }
    for consent in &writes.consents {
        consents.insert(keys::single(&consent.hash), encode("a consent", consent)?);
    }
    for (blueprint, state) in &writes.schedules {
        schedules.insert(keys::single(blueprint), encode("an imported value", state)?);
    }
    let trees = [
        &sled.revisions,
        &sled.blueprints,
        &sled.events,
        &sled.runs,
        &sled.run_index,
        &sled.saved,
        &sled.servers,
        &sled.consents,
        &sled.schedules,
    ];
    for (tree, batch) in trees.into_iter().zip(batches) {
        tree.apply_batch(batch).map_err(Error::db("importing"))?;
    }
    Ok(())
}
