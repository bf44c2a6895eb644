//! The backends a test runs on ([`Kind`], [`Place`], [`on_both!`]), builders for records,
//! events and envelopes, and raw sled access for damaging a store.

use mcpflow_engine::event::LogLevel;
use mcpflow_engine::{Envelope, EventKind, RunEvent, RunStatus, Summary};
use mcpflow_store::{Opened, RecordStatus, RunRecord, Store};
use mcpflow_testkit::postgres::Cluster;
use serde_json::json;
use std::path::Path;

/// Makes each named test function (taking a [`Kind`]) two tests: `sled::NAME` and
/// `postgres::NAME`. The PostgreSQL one skips when PostgreSQL is not installed, and fails
/// then under `CI=true` (see `mcpflow_testkit::postgres`).
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod sled {
            $( #[test] fn $name() { super::$name(crate::support::Kind::Sled) } )*
        }
        mod postgres {
            $( #[test] fn $name() { if let Some(kind) = crate::support::Kind::postgres() { super::$name(kind) } } )*
        }
    };
}

/// Which backend a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sled,
    Postgres,
}

impl Kind {
    /// PostgreSQL, when a throwaway cluster can run here.
    pub fn postgres() -> Option<Kind> {
        Cluster::shared().map(|_| Kind::Postgres)
    }
}

/// A store that can be opened, dropped and opened again: a sled folder, or a database of
/// its own in the test process's PostgreSQL cluster.
pub struct Place {
    dir: tempfile::TempDir,
    url: Option<String>,
}

impl Place {
    pub fn new(kind: Kind) -> Place {
        let dir = tempfile::tempdir().unwrap();
        let url = match kind {
            Kind::Sled => None,
            Kind::Postgres => Some(Cluster::shared().expect("a PostgreSQL cluster").database()),
        };
        Place { dir, url }
    }

    /// The database's URL (PostgreSQL only).
    pub fn url(&self) -> &str {
        self.url.as_deref().expect("a PostgreSQL place")
    }

    /// Opens (or connects to) the store.
    pub fn open(&self) -> mcpflow_store::Result<Opened> {
        match &self.url {
            Some(url) => Store::connect(url),
            None => Store::open(self.dir.path()),
        }
    }

    pub fn store(&self) -> Store {
        self.open().unwrap().store
    }
}

/// A new empty store on `kind`.
pub fn fresh(kind: Kind) -> Store {
    match kind {
        Kind::Sled => Store::open_temporary().unwrap(),
        Kind::Postgres => Place::new(kind).store(),
    }
}

/// The `n`th run id: UUID-v7-shaped, so later `n` sorts later.
pub fn run_id(n: u32) -> String {
    format!("01900000-0000-7000-8000-{n:012}")
}

pub fn record(id: &str, blueprint: &str) -> RunRecord {
    RunRecord {
        id: id.to_owned(),
        blueprint: blueprint.to_owned(),
        status: RecordStatus::Running,
        trigger: "cli".to_owned(),
        client: None,
        inputs: json!({"n": 1}),
        started_at: "2026-01-01T00:00:00.000Z".to_owned(),
        finished_at: None,
        envelope: None,
        blueprint_rev: Some(1),
        definition: None,
        rerun_of: None,
        resumed_from: None,
        debug: false,
        paused_ms: None,
    }
}

pub fn event(seq: u64) -> RunEvent {
    RunEvent {
        seq,
        at_ms: seq * 10,
        kind: EventKind::Log { level: LogLevel::Info, message: format!("event {seq}"), step: None },
    }
}

pub fn envelope(run_id: &str, blueprint: &str, status: RunStatus) -> Envelope {
    Envelope {
        run_id: run_id.to_owned(),
        blueprint: blueprint.to_owned(),
        status,
        output: json!({"ok": true}),
        summary: Summary { steps: 2, succeeded: 2, ..Summary::default() },
        errors: vec![],
        duration_ms: 12,
        trace_id: None,
    }
}

pub fn open(dir: &Path) -> Store {
    Store::open(dir).unwrap().store
}

/// Runs `change` on the raw sled database in `dir` (no store may have it open). Waits,
/// as `Store::open` does, for sled to let go of a store dropped a moment ago.
pub fn raw(dir: &Path, change: impl FnOnce(&sled::Db)) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let db = loop {
        match sled::open(dir) {
            Err(e) if e.to_string().contains("could not acquire lock") && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => break other.unwrap(),
        }
    };
    change(&db);
    db.flush().unwrap();
}

/// Replaces the value of the first key in `tree` that contains `needle`.
pub fn damage(dir: &Path, tree: &str, needle: &str, bytes: &[u8]) {
    raw(dir, |db| {
        let tree = db.open_tree(tree).unwrap();
        let key = tree
            .iter()
            .keys()
            .map(Result::unwrap)
            .find(|k| k.windows(needle.len()).any(|w| w == needle.as_bytes()))
            .unwrap_or_else(|| panic!("no key containing {needle}"));
        tree.insert(key, bytes).unwrap();
    });
}
