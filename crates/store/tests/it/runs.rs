//! Runs: recording, events in seq order, listing, finishing, deleting.

use crate::support::{Kind, damage, envelope, event, fresh, open, record, run_id};
use mcpflow_engine::RunStatus;
use mcpflow_store::{RecordStatus, RerunMode, RerunOf};

fn events_come_back_in_seq_order_even_when_appended_out_of_order(kind: Kind) {
    let store = fresh(kind);
    let id = run_id(1);
    store.begin_run(&record(&id, "inv")).unwrap();
    // Little-endian or decimal keys would put 256 before 255 or 65536 before 256.
    for seq in [65_536, 0, 256, 255, 1] {
        store.append_event(&id, &event(seq)).unwrap();
    }
    let seqs: Vec<u64> = store.events(&id).unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [0, 1, 255, 256, 65_536]);
    assert_eq!(store.events(&id).unwrap()[3], event(256));
}

fn events_of_one_run_never_mix_with_another(kind: Kind) {
    let store = fresh(kind);
    store.begin_run(&record("run", "inv")).unwrap();
    store.begin_run(&record("run2", "inv")).unwrap();
    store.append_event("run", &event(1)).unwrap();
    store.append_event("run2", &event(2)).unwrap();
    assert_eq!(store.events("run").unwrap(), [event(1)]);
    assert_eq!(store.events("run2").unwrap(), [event(2)]);
}

/// What a reader following a run from its journal asks: the events since the last it saw.
fn events_after_a_seq_are_the_later_ones_of_that_run_alone(kind: Kind) {
    let store = fresh(kind);
    store.begin_run(&record("run", "inv")).unwrap();
    store.begin_run(&record("run2", "inv")).unwrap();
    for seq in [1, 2, 255, 256] {
        store.append_event("run", &event(seq)).unwrap();
        store.append_event("run2", &event(seq)).unwrap();
    }
    let seqs = |after| store.events_after("run", after).unwrap().iter().map(|e| e.seq).collect::<Vec<_>>();
    assert_eq!(seqs(0), [1, 2, 255, 256]);
    assert_eq!(seqs(2), [255, 256]);
    assert_eq!(seqs(255), [256]);
    assert!(seqs(256).is_empty());
    assert!(seqs(u64::MAX).is_empty());
}

fn runs_are_listed_newest_first_and_filtered_by_blueprint(kind: Kind) {
    let store = fresh(kind);
    for (n, blueprint) in [(3, "a"), (1, "a"), (4, "b"), (2, "b"), (5, "a")] {
        store.begin_run(&record(&run_id(n), blueprint)).unwrap();
    }
    let ids = |records: Vec<mcpflow_store::RunRecord>| records.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(store.runs(None, 10).unwrap()), [5, 4, 3, 2, 1].map(run_id));
    assert_eq!(ids(store.runs(Some("a"), 10).unwrap()), [5, 3, 1].map(run_id));
    assert_eq!(ids(store.runs(Some("b"), 1).unwrap()), [run_id(4)]);
    assert_eq!(ids(store.runs(None, 2).unwrap()), [5, 4].map(run_id));
    assert!(store.runs(Some("c"), 10).unwrap().is_empty());
}

fn moved_runs_are_listed_under_the_new_blueprint_with_their_events_except_those_kept(kind: Kind) {
    let store = fresh(kind);
    for (n, blueprint) in [(1, "untitled"), (2, "other"), (3, "untitled"), (4, "untitled")] {
        store.begin_run(&record(&run_id(n), blueprint)).unwrap();
    }
    store.append_event(&run_id(1), &event(1)).unwrap();
    let ids = |records: Vec<mcpflow_store::RunRecord>| records.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(store.move_runs("untitled", "greet", &[run_id(4)]).unwrap(), 2);
    assert_eq!(ids(store.runs(Some("greet"), 10).unwrap()), [3, 1].map(run_id));
    assert_eq!(ids(store.runs(Some("untitled"), 10).unwrap()), [run_id(4)]);
    assert_eq!(ids(store.runs(Some("other"), 10).unwrap()), [run_id(2)]);
    assert_eq!(store.run(&run_id(1)).unwrap().unwrap().blueprint, "greet");
    assert_eq!(store.events(&run_id(1)).unwrap(), [event(1)]);
    assert_eq!(store.move_runs("nothing", "greet", &[]).unwrap(), 0);
}

fn finishing_a_run_records_status_time_and_envelope(kind: Kind) {
    let store = fresh(kind);
    let id = run_id(1);
    store.begin_run(&record(&id, "inv")).unwrap();
    assert_eq!(store.run(&id).unwrap().unwrap().status, RecordStatus::Running);

    let result = envelope(&id, "inv", RunStatus::Partial);
    store.finish_run(&id, &result).unwrap();
    let finished = store.run(&id).unwrap().unwrap();
    assert_eq!(finished.status, RecordStatus::Partial);
    assert!(finished.finished_at.as_deref().is_some_and(|t| t.ends_with('Z')), "{finished:?}");
    assert_eq!(finished.envelope, Some(result));
    assert_eq!(finished.inputs, record(&id, "inv").inputs);
}

fn a_run_must_be_recorded_before_its_events_or_its_finish(kind: Kind) {
    let store = fresh(kind);
    let missing = store.append_event("ghost", &event(0)).unwrap_err();
    assert_eq!(missing.code(), "RUN_NOT_FOUND");
    assert!(missing.to_string().contains("`ghost`"), "{missing}");
    let finish = store.finish_run("ghost", &envelope("ghost", "inv", RunStatus::Succeeded)).unwrap_err();
    assert_eq!(finish.code(), "RUN_NOT_FOUND");
    assert!(store.events("ghost").unwrap().is_empty());
}

fn a_run_id_begins_only_once(kind: Kind) {
    let store = fresh(kind);
    store.begin_run(&record("r", "inv")).unwrap();
    store.finish_run("r", &envelope("r", "inv", RunStatus::Succeeded)).unwrap();
    let again = store.begin_run(&record("r", "other")).unwrap_err();
    assert_eq!(again.code(), "RUN_EXISTS");
    assert_eq!(store.run("r").unwrap().unwrap().status, RecordStatus::Succeeded);
    assert!(store.runs(Some("other"), 10).unwrap().is_empty());
}

fn deleting_a_run_removes_its_events_and_its_place_in_the_list(kind: Kind) {
    let store = fresh(kind);
    let (gone, kept) = (run_id(1), run_id(2));
    for id in [&gone, &kept] {
        store.begin_run(&record(id, "inv")).unwrap();
        store.append_event(id, &event(0)).unwrap();
        store.append_event(id, &event(1)).unwrap();
    }
    assert!(store.delete_run(&gone).unwrap());
    assert!(store.run(&gone).unwrap().is_none());
    assert!(store.events(&gone).unwrap().is_empty());
    assert_eq!(store.runs(Some("inv"), 10).unwrap().len(), 1);
    assert_eq!(store.events(&kept).unwrap().len(), 2);
    assert!(!store.delete_run(&gone).unwrap());
}

#[test]
fn record_statuses_follow_the_engine() {
    assert_eq!(RecordStatus::from(RunStatus::Cancelled), RecordStatus::Cancelled);
    assert_eq!(RecordStatus::from(RunStatus::Interrupted).as_str(), "interrupted");
    assert_eq!(serde_json::to_value(RecordStatus::Running).unwrap(), "running");
}

#[test]
fn a_re_run_keeps_its_origin_and_a_record_from_before_the_field_reads_as_no_re_run() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (run_id(1), run_id(2));
    {
        let store = open(dir.path());
        store.begin_run(&record(&first, "inv")).unwrap();
        let mut rerun = record(&second, "inv");
        rerun.rerun_of = Some(RerunOf { run: first.clone(), step: "fetch".into(), mode: RerunMode::FromHere });
        store.begin_run(&rerun).unwrap();
        store.finish_run(&second, &envelope(&second, "inv", RunStatus::Succeeded)).unwrap();
        let back = store.run(&second).unwrap().unwrap();
        assert_eq!(back.rerun_of, rerun.rerun_of, "kept through begin and finish");
        assert_eq!(store.run(&first).unwrap().unwrap().rerun_of, None);
    }
    // A record as mcpflow wrote it before re-runs were recorded (no `rerun_of`).
    let mut old = serde_json::to_value(record(&first, "inv")).unwrap();
    old.as_object_mut().unwrap().remove("rerun_of");
    assert!(old.get("rerun_of").is_none());
    damage(dir.path(), "runs", &first, &serde_json::to_vec(&old).unwrap());
    let store = open(dir.path());
    let back = store.run(&first).unwrap().unwrap();
    assert_eq!((back.id.as_str(), back.rerun_of), (first.as_str(), None));
}

on_both!(
    events_come_back_in_seq_order_even_when_appended_out_of_order,
    events_of_one_run_never_mix_with_another,
    events_after_a_seq_are_the_later_ones_of_that_run_alone,
    runs_are_listed_newest_first_and_filtered_by_blueprint,
    finishing_a_run_records_status_time_and_envelope,
    a_run_must_be_recorded_before_its_events_or_its_finish,
    a_run_id_begins_only_once,
    deleting_a_run_removes_its_events_and_its_place_in_the_list,
    moved_runs_are_listed_under_the_new_blueprint_with_their_events_except_those_kept,
);
