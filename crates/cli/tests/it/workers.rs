//! `mcpflow worker --db URL` and `mcpflow run FILE --db URL [--detach]` (issue 34): runs
//! queued in a PostgreSQL store (a throwaway cluster of `mcpflow_testkit::postgres`) and
//! run by stateless workers; a worker killed while it holds runs loses nothing — its runs
//! are reaped when their lease expires and resumed elsewhere, their finished steps never
//! run again. Skips without PostgreSQL; fails then under `CI=true`.

use crate::spawned::{Killed, said_on_stderr, wait_for};
use crate::{echo_servers, repo, stderr, stdout};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::EventKind;
use mcpflow_store::{RecordStatus, RunRecord, Store};
use mcpflow_testkit::postgres::Cluster;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// Transforms around two calls to the echo fixture (a short sleep, then an echo).
fn blueprint() -> Value {
    json!({ "blueprint": 1, "id": "queued", "name": "Queued",
        "steps": [
            { "id": "first", "kind": "transform", "value": "{{ length(`[1, 2, 3]`) }}" },
            { "id": "nap", "kind": "tool", "server": "echo", "tool": "sleep", "args": { "ms": 150 }, "after": ["first"] },
            { "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "n={{ first }}" },
              "after": ["nap"] },
            { "id": "last", "kind": "transform", "value": "{{ say }}", "after": ["say"] }
        ] })
}

fn mcpflow(home: &Path, url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    command.arg("--db").arg(url).args(args).current_dir(repo()).env("MCPFLOW_HOME", home).env_remove("MCPFLOW_DB");
    command
}

fn ok(out: Output) -> Output {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

/// A database of the test cluster, a data folder, the echo fixture's servers file and the
/// blueprint's file, in a temporary folder.
struct Setup {
    url: String,
    home: std::path::PathBuf,
    servers: std::path::PathBuf,
    file: String,
    _dir: tempfile::TempDir,
}

fn setup() -> Option<Setup> {
    let cluster = Cluster::shared()?;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("queued.json");
    std::fs::write(&file, blueprint().to_string()).unwrap();
    Some(Setup {
        url: cluster.database(),
        home: dir.path().join("home"),
        servers: echo_servers(dir.path()),
        file: file.to_str().unwrap().to_owned(),
        _dir: dir,
    })
}

/// A worker with a short lease (so the reaper acts within seconds), running the echo
/// fixture from `servers`; returns once it says it is on the queue, with what it said.
fn worker(home: &Path, url: &str, servers: &Path, extra: &[&str]) -> (Killed, String) {
    let servers = servers.to_str().unwrap();
    let mut args = vec!["worker", "--lease", "3s", "--poll", "200ms", "--servers", servers, "--allow-all-servers"];
    args.extend_from_slice(extra);
    let mut child = mcpflow(home, url, &args).stdin(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let (said, rest) = said_on_stderr(&mut child, "up to");
    assert!(said.contains(&format!(":{}:", child.id())), "{said}");
    // Keep reading its stderr so it never blocks on a full pipe.
    std::thread::spawn(move || drop(rest.after_the_end()));
    (Killed(child), said)
}

/// Every run in the store, by id.
fn runs(store: &Store) -> HashMap<String, RunRecord> {
    store.runs(None, 10_000).unwrap().into_iter().map(|r| (r.id.clone(), r)).collect()
}

/// The top-level steps of run `id` with an event of kind `which` (`started`/`finished`).
fn steps(store: &Store, id: &str, finished: bool) -> BTreeSet<String> {
    let mut steps = BTreeSet::new();
    for event in store.events(id).unwrap() {
        match event.kind {
            EventKind::StepStarted { step, path, .. } if !finished && path.is_empty() => steps.insert(step),
            EventKind::StepFinished { step, path, status, .. }
                if finished && path.is_empty() && status == mcpflow_engine::StepStatus::Succeeded =>
            {
                steps.insert(step)
            }
            _ => false,
        };
    }
    steps
}

/// The runs held by the worker with pid `pid` that have finished a step.
fn held_with_a_finished_step(db: &mut postgres::Client, pid: u32) -> Vec<String> {
    let rows = db
        .query(
            "SELECT r.id FROM runs r WHERE r.status = 'running' AND r.lease_owner LIKE $1
             AND EXISTS (SELECT 1 FROM events e WHERE e.run_id = r.id AND e.event::text LIKE '%\"StepFinished\"%')",
            &[&format!("%:{pid}:%")],
        )
        .unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

#[test]
fn three_workers_run_200_queued_runs_once_each_through_a_worker_killed_while_it_holds_runs() {
    let Some(Setup { url, home, servers, file, _dir }) = setup() else { return };
    let file = file.as_str();

    // 200 runs queued before any worker is there, eight `run --detach` at a time.
    let mut queued = Vec::new();
    for _ in 0..25 {
        let batch: Vec<Child> = (0..8)
            .map(|_| mcpflow(&home, &url, &["run", "--detach", file]).stdout(Stdio::piped()).spawn().unwrap())
            .collect();
        for child in batch {
            let out = ok(child.wait_with_output().unwrap());
            queued.push(stdout(&out).trim().to_owned());
        }
    }
    assert_eq!(queued.iter().collect::<BTreeSet<_>>().len(), 200, "200 distinct ids: {queued:?}");

    let workers: Vec<Killed> = (0..3).map(|_| worker(&home, &url, &servers, &["--concurrency", "4"]).0).collect();
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();

    // The first worker is killed once the database shows it holds runs that have finished
    // a step (so their resume has steps to keep).
    let mut workers = workers.into_iter();
    let mut victim = workers.next().unwrap();
    let pid = victim.0.id();
    let held = wait_for(Duration::from_secs(120), || {
        Some(held_with_a_finished_step(&mut db, pid)).filter(|held| !held.is_empty())
    })
    .expect("the first worker never held a run with a finished step");
    victim.0.kill().unwrap();
    victim.0.wait().unwrap();

    // Every queued run ends: the store shows 200 succeeded runs.
    let store = Store::connect_shared(&url).unwrap().store;
    let done = wait_for(Duration::from_secs(300), || {
        let all = runs(&store);
        let succeeded = all.values().filter(|r| r.status == RecordStatus::Succeeded).count();
        let open = all.values().any(|r| matches!(r.status, RecordStatus::Queued | RecordStatus::Running));
        (succeeded >= 200 && !open).then_some(all)
    });
    let all = done.unwrap_or_else(|| {
        let all = runs(&store);
        let mut count: HashMap<&str, usize> = HashMap::new();
        for r in all.values() {
            *count.entry(r.status.as_str()).or_default() += 1;
        }
        panic!("the queued runs did not all end: {count:?}")
    });
    drop(workers);

    // Each queued run ends in one chain: interrupted runs, each resumed by the next, and
    // one succeeded run at its end; no run outside the chains, none claimed twice.
    let resumed_by: HashMap<&str, &RunRecord> =
        all.values().filter_map(|r| r.resumed_from.as_deref().map(|from| (from, r))).collect();
    let attempts: HashMap<String, i32> =
        db.query("SELECT id, attempts FROM runs", &[]).unwrap().iter().map(|row| (row.get(0), row.get(1))).collect();
    let mut chained = 0;
    let mut resumes = 0;
    for root in &queued {
        let mut run = &all[root];
        let mut claims = 1;
        loop {
            chained += 1;
            assert_eq!(attempts[&run.id], claims, "run {} was claimed once, as claim {claims} of its chain", run.id);
            match run.status {
                RecordStatus::Succeeded => break,
                RecordStatus::Interrupted => {
                    let next = resumed_by.get(run.id.as_str()).unwrap_or_else(|| panic!("{} not resumed", run.id));
                    // No step that finished before the worker died started again.
                    let kept = steps(&store, &run.id, true);
                    let again = steps(&store, &next.id, false);
                    assert!(kept.is_disjoint(&again), "run {} ran {:?} again", next.id, kept.intersection(&again));
                    assert_eq!(steps(&store, &next.id, true).len(), 4, "the resume finished every step");
                    resumes += 1;
                    run = next;
                    claims += 1;
                }
                other => panic!("run {} ended {other:?}", run.id),
            }
        }
    }
    assert_eq!(chained, all.len(), "every run is in the chain of one queued run");
    assert!(resumes >= held.len(), "the runs the killed worker held were resumed: {held:?}");
    for id in &held {
        assert_eq!(all[id].status, RecordStatus::Interrupted, "run {id} of the killed worker");
    }
}

/// `GET PATH` on `addr`: the status line and the body.
fn get(addr: &str, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn a_worker_serves_its_probes_and_run_with_db_waits_for_the_queued_run_and_prints_its_result() {
    let Some(Setup { url, home, servers, file, _dir }) = setup() else { return };
    let (child, said) = worker(&home, &url, &servers, &["--health", "127.0.0.1:0"]);
    let addr = said.split("http://").nth(1).and_then(|s| s.split('/').next()).expect(&said).to_owned();
    assert!(get(&addr, "/healthz").starts_with("HTTP/1.1 200"), "healthz");
    let ready = get(&addr, "/readyz");
    assert!(ready.starts_with("HTTP/1.1 200") && ready.ends_with("ready\n"), "{ready}");
    assert!(get(&addr, "/elsewhere").starts_with("HTTP/1.1 404"));

    // Without --detach, `run --db` waits for the worker and prints the envelope.
    let out = ok(mcpflow(&home, &url, &["run", "--json", &file]).output().unwrap());
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded", "{envelope}");
    assert_eq!(envelope["output"], "n=3", "{envelope}");

    // The commands that read the store share it with the worker: they work while it runs.
    let run_id = envelope["run_id"].as_str().unwrap();
    let out = ok(mcpflow(&home, &url, &["runs", "--json"]).output().unwrap());
    assert!(stdout(&out).contains(run_id), "{}", stdout(&out));
    let out = ok(mcpflow(&home, &url, &["show", run_id]).output().unwrap());
    assert!(stdout(&out).contains("succeeded"), "{}", stdout(&out));
    ok(mcpflow(&home, &url, &["list"]).output().unwrap());
    let backup = _dir.path().join("backup.json");
    ok(mcpflow(&home, &url, &["export", backup.to_str().unwrap()]).output().unwrap());
    let doc: Value = serde_json::from_slice(&std::fs::read(&backup).unwrap()).unwrap();
    assert!(doc.to_string().contains(run_id), "the export holds the run");
    drop(child);

    // --detach needs a database.
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--detach", &file])
        .env("MCPFLOW_HOME", &home)
        .env_remove("MCPFLOW_DB")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--detach queues the run in a database"), "{}", stderr(&out));
}

/// The process id of the worker leading the schedules, as PostgreSQL sees it: the
/// application name of the connection holding the scheduler's lock.
fn leader(db: &mut postgres::Client) -> Option<u32> {
    let row = db
        .query_opt(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[&0x6d63_7066_u32, &0x6c6f_7703_u32],
        )
        .unwrap()?;
    row.get::<_, String>(0).strip_prefix("mcpflow scheduler ")?.parse().ok()
}

/// The fired slots, oldest first: (slot as Unix milliseconds, the run queued for it).
fn fires(db: &mut postgres::Client) -> Vec<(i64, String)> {
    db.query(
        "SELECT (extract(epoch FROM slot) * 1000)::bigint, run_id FROM schedule_fires WHERE blueprint = 'ticks'
         ORDER BY slot",
        &[],
    )
    .unwrap()
    .iter()
    .map(|row| (row.get(0), row.get(1)))
    .collect()
}

/// How many fired slots have a run that succeeded (itself, or the run resuming it).
fn succeeded_fires(db: &mut postgres::Client) -> i64 {
    db.query_one(
        "SELECT count(*) FROM schedule_fires f WHERE EXISTS (SELECT 1 FROM runs r WHERE r.status = 'succeeded'
         AND (r.id = f.run_id OR r.record->>'resumed_from' = f.run_id))",
        &[],
    )
    .unwrap()
    .get(0)
}

#[test]
fn two_workers_fire_a_schedule_of_every_second_once_per_slot_also_when_the_leader_is_killed() {
    let Some(Setup { url, home, servers, _dir, .. }) = setup() else { return };
    let store = Store::connect_shared(&url).unwrap().store;
    let ticks = json!({ "blueprint": 1, "id": "ticks", "schedule": { "every": "1s" },
        "steps": [{ "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "tick" } }] });
    store.save_blueprint("ticks", &ticks).unwrap();
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();

    let mut workers: Vec<Killed> = (0..2).map(|_| worker(&home, &url, &servers, &[]).0).collect();
    let first = wait_for(Duration::from_secs(30), || leader(&mut db)).expect("no worker took the scheduler's lock");
    let at = workers.iter().position(|w| w.0.id() == first).expect("the leader is one of the two workers");

    // The leader fires a few slots, then is killed.
    wait_for(Duration::from_secs(60), || (succeeded_fires(&mut db) >= 3).then_some(()))
        .unwrap_or_else(|| panic!("the schedule did not fire three runs: {:?}", fires(&mut db)));
    let mut killed = workers.remove(at);
    killed.0.kill().unwrap();
    killed.0.wait().unwrap();
    let before = fires(&mut db);

    // The other worker takes the lock over and goes on.
    let second = wait_for(Duration::from_secs(30), || leader(&mut db).filter(|pid| *pid != first))
        .expect("the other worker never took the scheduler's lock over");
    assert_eq!(second, workers[0].0.id());
    let last_before = before.last().map(|(slot, _)| *slot).unwrap_or_default();
    wait_for(Duration::from_secs(60), || {
        let after = fires(&mut db).iter().filter(|(slot, _)| *slot > last_before).count();
        (after >= 3 && succeeded_fires(&mut db) >= i64::try_from(before.len()).unwrap() + 3).then_some(())
    })
    .unwrap_or_else(|| panic!("the schedule did not go on after the leader died: {:?}", fires(&mut db)));
    drop(workers);

    // One run per slot: the slots are whole seconds from the first one, each fired once
    // (the table's key), and the runs of the schedule are exactly the fires' runs and the
    // runs resuming them (a run the killed worker held).
    let fired = fires(&mut db);
    let (first_slot, _) = fired[0];
    for pair in fired.windows(2) {
        let step = pair[1].0 - pair[0].0;
        assert!(step >= 1000 && step % 1000 == 0, "slots {} and {} are whole seconds apart", pair[0].0, pair[1].0);
    }
    assert!(fired.iter().all(|(slot, _)| (slot - first_slot) % 1000 == 0));
    let all = runs(&store);
    let fired_runs: BTreeSet<&str> = fired.iter().map(|(_, run)| run.as_str()).collect();
    let scheduled: BTreeSet<&str> = all
        .values()
        .filter(|r| r.blueprint == "ticks" && r.trigger == "schedule" && r.resumed_from.is_none())
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(scheduled, fired_runs, "each scheduled run is the run of one slot");
    for r in all.values().filter(|r| r.resumed_from.is_some()) {
        assert!(fired_runs.contains(r.resumed_from.as_deref().unwrap()), "run {} resumes a fired run", r.id);
    }
}

/// A queued run that asks a person: its worker parks it (`waiting` in the database, the
/// lease let go) and goes on with other runs; `mcpflow answer --db` resumes it, the step
/// before the question not run again.
#[test]
fn a_queued_run_that_asks_a_person_waits_in_the_database_and_answer_resumes_it() {
    let Some(Setup { url, home, servers, file: queued, _dir }) = setup() else { return };
    let doc = json!({ "blueprint": 1, "id": "asks", "steps": [
        { "id": "first", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "before" } },
        { "id": "ask", "kind": "input", "prompt": "Which colour?", "after": ["first"] },
        { "id": "after", "kind": "transform", "value": "{{ first }} then {{ ask }}", "after": ["ask"] },
    ], "output": "{{ after }}" });
    let file = _dir.path().join("asks.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let (_worker, _) = worker(&home, &url, &servers, &["--concurrency", "1"]);
    let out = ok(mcpflow(&home, &url, &["run", "--detach", file.to_str().unwrap()]).output().unwrap());
    let id = stdout(&out).trim().to_owned();
    let store = Store::connect_shared(&url).unwrap().store;
    let waiting = wait_for(Duration::from_secs(60), || {
        store.run(&id).unwrap().filter(|r| r.status == RecordStatus::Waiting && !lease_held(&url, &id))
    });
    assert!(waiting.is_some(), "the run was not left waiting: {:?}", store.run(&id).unwrap());
    // The worker's one slot is free again: another queued run runs to its end.
    let other = ok(mcpflow(&home, &url, &["run", "--json", &queued]).output().unwrap());
    let envelope: Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded", "{envelope}");

    let answers = _dir.path().join("answers.json");
    std::fs::write(&answers, json!({ "ask": "teal" }).to_string()).unwrap();
    let servers = servers.to_str().unwrap();
    let out = ok(mcpflow(
        &home,
        &url,
        &[
            "answer",
            &id,
            "ask",
            "--answers",
            answers.to_str().unwrap(),
            "--servers",
            servers,
            "--allow-all-servers",
            "--json",
        ],
    )
    .output()
    .unwrap());
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded", "{envelope}");
    assert_eq!(envelope["output"], "before then teal", "{envelope}");
    let resumed = envelope["run_id"].as_str().unwrap();
    assert!(steps(&store, resumed, false).contains("ask"));
    assert!(!steps(&store, resumed, false).contains("first"), "the step before the question ran again");
    assert_eq!(store.run(&id).unwrap().unwrap().status, RecordStatus::Interrupted, "the waiting run is settled");
}

/// Whether a worker holds run `id`'s lease.
fn lease_held(url: &str, id: &str) -> bool {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    db.query_one("SELECT lease_owner IS NOT NULL FROM runs WHERE id = $1", &[&id]).unwrap().get(0)
}

/// Which stdio commands the team's workers may start is a consent in the database: a
/// worker started without `--allow-*` refuses the echo fixture until someone approves it
/// in the team's store (as the studio's Servers panel on the team's service does), then
/// runs it — without a restart.
#[test]
fn a_server_approved_in_the_teams_store_starts_on_a_running_worker() {
    let Some(Setup { url, home, servers, file, _dir }) = setup() else { return };
    let servers_arg = servers.to_str().unwrap();
    let mut child = mcpflow(&home, &url, &["worker", "--poll", "200ms", "--servers", servers_arg])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_, said) = said_on_stderr(&mut child, "up to");
    let _worker = Killed(child);

    let refused: Value =
        serde_json::from_slice(&mcpflow(&home, &url, &["run", "--json", &file]).output().unwrap().stdout).unwrap();
    assert_eq!(refused["status"], "failed", "{refused}");
    assert!(refused.to_string().contains("SERVER_NOT_APPROVED"), "{refused}");

    // Approved in the team's store by another process.
    let options = AppOptions { server_files: vec![servers.clone()], ..AppOptions::default() };
    let store = Store::connect_shared(&url).unwrap().store;
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let approver = App::with_store(store, Vec::new(), options).unwrap();
        approver.approve_server("echo").unwrap();
        approver.shutdown().await;
    });
    said.wait_for_line("the servers or consents in the store changed");

    let ran: Value =
        serde_json::from_slice(&ok(mcpflow(&home, &url, &["run", "--json", &file]).output().unwrap()).stdout).unwrap();
    assert_eq!(ran["status"], "succeeded", "{ran}");
}
