//! What only the PostgreSQL backend has: its SQL migrations, the store's lock in the
//! database, the URL shown without its password, a record damaged in its table, a sled
//! store moved into it, and calls from inside tokio runtimes (the store's connection
//! thread). Each test skips without PostgreSQL, and fails then under `CI=true`.

use crate::backup::filled;
use crate::support::{Kind, Place, record, run_id};
use mcpflow_store::{Error, ImportOptions, SCHEMA_VERSION, Store};
use mcpflow_testkit::postgres::Cluster;
use postgres::{Client, NoTls};

/// A place in this process's cluster, or `None` (the test skips).
fn place() -> Option<Place> {
    Kind::postgres().map(Place::new)
}

/// A plain connection to the place's database, beside the store.
fn raw(place: &Place) -> Client {
    Client::connect(place.url(), NoTls).unwrap()
}

#[test]
fn connecting_applies_the_migrations_once_and_records_the_schema_version() {
    let Some(place) = place() else { return };
    let opened = place.open().unwrap();
    assert_eq!(opened.migrated_from, None);
    drop(opened);
    let opened = place.open().unwrap();
    assert_eq!(opened.migrated_from, None);
    drop(opened);
    let mut db = raw(&place);
    let versions: Vec<i64> = db
        .query("SELECT version FROM mcpflow_migrations ORDER BY version", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, [1, 2, 3, 4], "each migration once");
    let row = db.query_one("SELECT value::text FROM mcpflow_meta WHERE key = 'schema_version'", &[]).unwrap();
    assert_eq!(row.get::<_, String>(0), SCHEMA_VERSION.to_string());
}

#[test]
fn a_database_migrated_by_a_newer_mcpflow_is_refused_and_left_untouched() {
    let Some(place) = place() else { return };
    let store = place.store();
    store.begin_run(&record(&run_id(1), "inv")).unwrap();
    drop(store);
    raw(&place).execute("INSERT INTO mcpflow_migrations (version, name) VALUES (99, 'from the future')", &[]).unwrap();

    let error = place.open().unwrap_err();
    assert!(matches!(error, Error::NewerDatabase { found: 99, .. }), "{error:?}");
    assert_eq!(error.code(), "STORE_NEWER_SCHEMA");
    assert!(error.to_string().contains("upgrade mcpflow"), "{error}");
    // Not swept: the run is still `running`.
    let status: String = raw(&place).query_one("SELECT status FROM runs", &[]).unwrap().get(0);
    assert_eq!(status, "running");
}

#[test]
fn a_newer_schema_version_in_the_database_is_refused() {
    let Some(place) = place() else { return };
    drop(place.store());
    let newer = (SCHEMA_VERSION + 1).to_string();
    raw(&place)
        .execute("UPDATE mcpflow_meta SET value = $1::text::json WHERE key = 'schema_version'", &[&newer])
        .unwrap();
    let error = place.open().unwrap_err();
    assert!(matches!(error, Error::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1), "{error:?}");
}

#[test]
fn a_second_process_finds_the_store_locked_until_the_first_closes_it() {
    let Some(place) = place() else { return };
    let first = place.store();
    let error = place.open().unwrap_err();
    assert_eq!(error.code(), "STORE_LOCKED");
    assert!(error.to_string().contains("in use by another mcpflow process"), "{error}");
    drop(first);
    place.open().unwrap();
}

#[test]
fn the_password_in_the_url_is_never_shown() {
    let Some(cluster) = Cluster::shared() else { return };
    // The throwaway cluster trusts local connections, so any password gets in.
    let url = cluster.database().replace("postgres@", "postgres:hunter2@");
    let store = Store::connect(&url).unwrap().store;
    let shown = store.path().display().to_string();
    assert!(shown.starts_with("postgresql://postgres@/t") && !shown.contains("hunter2"), "{shown}");
    assert!(!format!("{store:?}").contains("hunter2"));

    let nowhere = format!("postgresql://postgres:hunter2@/t1?host={}", cluster.socket_folder().join("gone").display());
    let error = Store::connect(&nowhere).unwrap_err();
    assert_eq!(error.code(), "STORE_CONNECT");
    let text = error.to_string();
    assert!(text.contains("gone") && text.contains("MCPFLOW_DB") && !text.contains("hunter2"), "{text}");
}

#[test]
fn a_damaged_record_is_skipped_reported_and_removable() {
    let Some(place) = place() else { return };
    let store = place.store();
    let (broken, fine) = (run_id(1), run_id(2));
    store.begin_run(&record(&broken, "inv")).unwrap();
    store.begin_run(&record(&fine, "inv")).unwrap();
    drop(store);
    // Valid JSON (the column is `json`), but not a run record.
    raw(&place).execute("UPDATE runs SET record = '{\"id\": 1}' WHERE id = $1", &[&broken]).unwrap();

    let opened = place.open().unwrap();
    assert_eq!(opened.interrupted, std::slice::from_ref(&fine));
    assert_eq!(opened.unreadable.iter().map(|u| u.run_id.as_str()).collect::<Vec<_>>(), [broken.as_str()]);
    let store = opened.store;
    let error = store.run(&broken).unwrap_err();
    assert_eq!(error.code(), "RUN_UNREADABLE");
    assert!(error.to_string().contains(&format!("mcpflow runs --remove {broken}")), "{error}");
    let list = store.run_list(Some("inv"), 10).unwrap();
    assert_eq!(list.runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [fine.as_str()]);
    assert_eq!(list.skipped[0].run_id, broken);
    assert_eq!(store.backup().unwrap().skipped.len(), 1);
    assert!(store.delete_run(&broken).unwrap());
    assert!(store.run_list(None, 10).unwrap().skipped.is_empty());
}

#[test]
fn a_sled_store_moves_into_postgresql_whole() {
    let Some(place) = place() else { return };
    let doc = filled(Kind::Sled).export().unwrap();
    let report = place.store().import_with(&doc, ImportOptions { consents: true }).unwrap();
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!((report.blueprints.added, report.runs.added), (2, 2));
    assert_eq!(place.store().export().unwrap(), doc, "read back after a reconnect, byte for byte");
}

/// The store's API is synchronous; its PostgreSQL connection lives on a thread of its
/// own, so calling it from inside a runtime — a current-thread one as `mcpflow run`'s,
/// or tasks of a multi-threaded one — neither panics nor deadlocks.
#[test]
fn the_store_answers_from_inside_tokio_runtimes() {
    let Some(place) = place() else { return };
    let current = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let store = current.block_on(async { place.open().unwrap().store });
    current.block_on(async {
        store.save_blueprint("inv", &serde_json::json!({"id": "inv"})).unwrap();
    });
    let many = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let tasks: Vec<_> = (1..=8)
        .map(|n| {
            let store = store.clone();
            many.spawn(async move { store.begin_run(&record(&run_id(n), "inv")).unwrap() })
        })
        .collect();
    many.block_on(async {
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(store.runs(Some("inv"), 100).unwrap().len(), 8);
    assert_eq!(store.blueprint("inv").unwrap().unwrap().meta.rev, 1);
}
