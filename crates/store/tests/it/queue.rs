//! The run queue of `mcpflow worker` (PostgreSQL only): the owner and the sharers of a
//! store exclude each other, a claim takes the oldest queued run once, a lease is renewed
//! by its owner only, the reaper interrupts an expired run and queues its resume, a
//! listener hears a run queued, and a folder refuses the queue. Skips without
//! PostgreSQL; fails then under `CI=true`.

use crate::support::{Kind, Place, record, run_id};
use mcpflow_store::{RecordStatus, RunRecord, Store};
use postgres::{Client, NoTls};
use serde_json::json;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(60);

fn place() -> Option<Place> {
    Kind::postgres().map(Place::new)
}

fn shared(place: &Place) -> Store {
    Store::connect_shared(place.url()).unwrap().store
}

fn queued(n: u32) -> RunRecord {
    RunRecord {
        status: RecordStatus::Queued,
        blueprint_rev: None,
        definition: Some(json!({ "blueprint": 1, "id": "q", "steps": [] })),
        ..record(&run_id(n), "q")
    }
}

#[test]
fn an_owner_and_sharers_of_a_store_exclude_each_other() {
    let Some(place) = place() else { return };
    let (one, two) = (shared(&place), shared(&place));
    let error = place.open().unwrap_err();
    assert_eq!(error.code(), "STORE_LOCKED");
    assert!(error.to_string().contains("`mcpflow worker`s sharing it"), "{error}");
    drop((one, two));
    let owner = place.store();
    assert_eq!(Store::connect_shared(place.url()).unwrap_err().code(), "STORE_LOCKED");
    drop(owner);
}

#[test]
fn a_claim_takes_the_oldest_queued_run_once_under_the_workers_lease() {
    let Some(place) = place() else { return };
    let store = shared(&place);
    store.enqueue(&queued(1)).unwrap();
    store.enqueue(&queued(2)).unwrap();
    assert_eq!(store.enqueue(&queued(1)).unwrap_err().code(), "RUN_EXISTS");

    let first = store.claim("w1", LEASE).unwrap().unwrap();
    let second = store.claim("w2", LEASE).unwrap().unwrap();
    assert_eq!((first.id.as_str(), second.id.as_str()), (run_id(1).as_str(), run_id(2).as_str()));
    assert_eq!(store.claim("w1", LEASE).unwrap(), None, "nothing is left to claim");

    assert!(store.renew_lease(&first.id, "w1", LEASE).unwrap());
    assert!(!store.renew_lease(&first.id, "w2", LEASE).unwrap(), "only the lease's owner renews it");
    let row = Client::connect(place.url(), NoTls)
        .unwrap()
        .query_one("SELECT status, lease_owner, attempts FROM runs WHERE id = $1", &[&first.id])
        .unwrap();
    assert_eq!(
        (row.get::<_, String>(0), row.get::<_, String>(1), row.get::<_, i32>(2)),
        ("running".into(), "w1".into(), 1)
    );
}

#[test]
fn the_reaper_interrupts_a_run_whose_lease_expired_and_queues_its_resume() {
    let Some(place) = place() else { return };
    let store = shared(&place);
    store.enqueue(&queued(1)).unwrap();
    store.enqueue(&queued(2)).unwrap();
    let (gone, alive) = (store.claim("w1", LEASE).unwrap().unwrap(), store.claim("w2", LEASE).unwrap().unwrap());
    assert!(store.reap().unwrap().is_empty(), "no lease has expired");
    // The worker of `gone` died: its lease ran out.
    let mut db = Client::connect(place.url(), NoTls).unwrap();
    db.execute("UPDATE runs SET lease_until = now() - interval '1 second' WHERE id = $1", &[&gone.id]).unwrap();

    let reaped = store.reap().unwrap();
    assert_eq!(reaped.len(), 1, "{reaped:?}");
    assert_eq!((reaped[0].interrupted.as_str(), reaped[0].attempts), (gone.id.as_str(), 1));
    let resume = reaped[0].resumed_by.clone().unwrap();
    assert_eq!(store.run(&gone.id).unwrap().unwrap().status, RecordStatus::Interrupted);
    assert_eq!(store.run(&alive.id).unwrap().unwrap().status, RecordStatus::Queued, "the live run is left alone");
    assert!(!store.renew_lease(&gone.id, "w1", LEASE).unwrap(), "the dead worker's lease is gone");
    assert!(store.reap().unwrap().is_empty(), "a run is reaped once");

    let claimed = store.claim("w3", LEASE).unwrap().unwrap();
    assert_eq!(claimed.id, resume);
    assert_eq!(claimed.resumed_from.as_deref(), Some(gone.id.as_str()));
    assert_eq!((claimed.inputs, claimed.definition), (gone.inputs, gone.definition));
    assert_eq!(store.resumed_by(&gone.id).unwrap().as_deref(), Some(resume.as_str()));
    let attempts: i32 = db.query_one("SELECT attempts FROM runs WHERE id = $1", &[&resume]).unwrap().get(0);
    assert_eq!(attempts, 2, "the claims of the run and its resume");
}

#[test]
fn a_listener_hears_each_run_queued() {
    let Some(place) = place() else { return };
    let store = shared(&place);
    let (heard, hear) = std::sync::mpsc::channel();
    let _listener = store
        .listen_for_queued(move || {
            let _ = heard.send(());
        })
        .unwrap();
    store.enqueue(&queued(1)).unwrap();
    hear.recv_timeout(Duration::from_secs(30)).expect("the queued run was announced");
}

#[test]
fn a_folder_has_no_queue() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap().store;
    let error = store.enqueue(&queued(1)).unwrap_err();
    assert_eq!(error.code(), "STORE_NEEDS_DATABASE");
    assert!(error.to_string().contains("--db URL"), "{error}");
}
