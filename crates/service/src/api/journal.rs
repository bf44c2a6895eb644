//! Following a run that another process runs (a `mcpflow worker` on the team's database):
//! its events are read from the store's journal as they are recorded, in batches like a
//! run of this process, until its record says it ended.

use super::local::{EventStream, MAX_BATCH, encode_batch};
use mcpflow_store::{RecordStatus, Store};
use std::time::Duration;
use tokio::sync::mpsc;

/// How often the journal is read again while the run goes on.
const POLL: Duration = Duration::from_millis(200);

/// Whether a run with this record is still going somewhere (or queued to).
pub(crate) fn unfinished(status: RecordStatus) -> bool {
    matches!(status, RecordStatus::Queued | RecordStatus::Running | RecordStatus::Waiting)
}

/// The events of run `run_id` from its first on, read from `store`'s journal until the
/// run ends (the last batch is marked `done`) or the reader goes away.
pub(crate) fn follow(store: Store, run_id: String) -> EventStream {
    let (batches, receiver) = mpsc::channel(4);
    tokio::spawn(async move {
        let mut after = 0;
        loop {
            // The record first: every event recorded before it said "ended" is read below.
            let ended = match store.run(&run_id) {
                Ok(Some(record)) => !unfinished(record.status),
                Ok(None) => true,
                Err(error) => {
                    tracing::warn!(run = %run_id, %error, "reading a followed run's record failed; it is no longer followed");
                    true
                }
            };
            let events = match store.events_after(&run_id, after) {
                Ok(events) => events,
                Err(error) => {
                    tracing::warn!(run = %run_id, %error, "reading a followed run's events failed; it is no longer followed");
                    Vec::new()
                }
            };
            for chunk in events.chunks(MAX_BATCH) {
                after = chunk.last().map_or(after, |e| e.seq);
                if batches.send(encode_batch(chunk, 0, false)).await.is_err() {
                    return;
                }
            }
            if ended {
                let _ = batches.send(encode_batch::<mcpflow_engine::RunEvent>(&[], 0, true)).await;
                return;
            }
            tokio::select! {
                () = batches.closed() => return,
                () = tokio::time::sleep(POLL) => {}
            }
        }
    });
    EventStream::remote(receiver)
}
