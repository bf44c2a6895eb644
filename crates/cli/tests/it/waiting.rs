//! Runs that wait for a person, and survive the process: `mcpflow run --store --wait`
//! waits at an `input` step with the run `waiting` in the store; killed there (SIGKILL)
//! or stopped (Ctrl-C), the run is still `waiting` with its question on the next start
//! (`mcpflow runs --waiting`), and `mcpflow answer RUN STEP --answers FILE` resumes it —
//! the step that had finished is not run again: the `echo` fixture's `record` tool
//! appends a line per call to a file, and each line is there exactly once.

use crate::{echo_servers, repo, stderr, stdout};
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `record` (line `first`) → `ask` (an `input` step) → `record` (line `second <answer>`).
fn blueprint(dir: &Path, calls: &Path) -> PathBuf {
    let record = |id: &str, line: &str| {
        json!({ "id": id, "kind": "tool", "server": "echo", "tool": "record",
                "args": { "file": calls.display().to_string(), "line": line } })
    };
    let doc = json!({ "blueprint": 1, "id": "ask-between", "steps": [
        record("first", "first"),
        { "id": "ask", "kind": "input", "prompt": "Which colour?", "after": ["first"] },
        record("second", "second {{ ask }}"),
    ]});
    let path = dir.join("ask-between.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    servers: PathBuf,
    file: PathBuf,
    calls: PathBuf,
    answers: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = echo_servers(dir.path());
    let calls = dir.path().join("calls.txt");
    let file = blueprint(dir.path(), &calls);
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, json!({ "ask": "blue" }).to_string()).unwrap();
    Setup { _dir: dir, home, servers, file, calls, answers }
}

impl Setup {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
        cmd.args(args).current_dir(repo()).env("MCPFLOW_HOME", &self.home).stdin(Stdio::null());
        cmd
    }

    fn mcpflow(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn path(p: &Path) -> &str {
        p.to_str().unwrap()
    }

    /// `mcpflow run --store --wait` of the blueprint, until it says it waits at `ask`;
    /// returns the child and the run id.
    fn start_waiting(&self) -> (Child, String) {
        self.start_waiting_on(&self.servers, &self.file, "Which colour?")
    }

    fn start_waiting_on(&self, servers: &Path, file: &Path, message: &str) -> (Child, String) {
        let mut child = self
            .cmd(&[
                "run",
                "--store",
                "--wait",
                "--allow-all-servers",
                "--servers",
                Self::path(servers),
                Self::path(file),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix("run ")
                        && let Some((run, tail)) = rest.split_once(' ')
                        && tail.starts_with(&format!("waits for an answer at step `ask`: {message}"))
                    {
                        return (child, run.to_owned());
                    }
                    seen.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("the run never said it waits at `ask`; stderr:\n{}", seen.join("\n"));
                }
            }
        }
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.calls).unwrap_or_default().lines().map(str::to_owned).collect()
    }

    fn record(&self, run: &str) -> Value {
        let out = self.mcpflow(&["show", run, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()["run"].clone()
    }

    fn answer(&self, run: &str, answers: &Path) -> Output {
        self.mcpflow(&[
            "answer",
            run,
            "ask",
            "--answers",
            Self::path(answers),
            "--file",
            Self::path(&self.file),
            "--allow-all-servers",
            "--servers",
            Self::path(&self.servers),
        ])
    }
}

#[test]
fn sigkill_while_a_run_waits_leaves_it_waiting_and_answer_resumes_it_without_running_finished_steps_again() {
    let s = setup();
    let (mut child, run) = s.start_waiting();
    assert_eq!(s.calls(), ["first"], "the first step ran before the question");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // On the next start the run still waits, with its question.
    assert_eq!(s.record(&run)["status"], "waiting");
    let shown = stdout(&s.mcpflow(&["show", &run]));
    assert!(shown.contains(&format!("run {run}  blueprint ask-between  waiting")), "{shown}");
    assert!(shown.lines().any(|l| l.trim_start().starts_with("ask") && l.contains("waiting")), "{shown}");
    assert!(shown.contains(&format!("waits at step `ask`: Which colour? (value (string, required)); answer: mcpflow answer {run} ask --answers FILE")), "{shown}");
    let listed = s.mcpflow(&["runs", "--waiting"]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let text = stdout(&listed);
    assert!(text.contains(&format!("{run}  ask-between")), "{text}");
    assert!(text.contains("waiting  step `ask`: Which colour?"), "{text}");
    assert!(text.contains("fields: value (string, required)"), "{text}");
    assert!(text.contains(&format!("answer: mcpflow answer {run} ask --answers FILE")), "{text}");
    let json_out = s.mcpflow(&["runs", "--waiting", "--json"]);
    let list: Value = serde_json::from_str(&stdout(&json_out)).unwrap();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!((&list[0]["run"], &list[0]["status"]), (&json!(run), &json!("waiting")));
    assert_eq!((&list[0]["question"]["step"], &list[0]["question"]["asking"]), (&json!("ask"), &json!("input")));

    // A wrong answer is refused, and the run still waits.
    let wrong = s._dir.path().join("wrong.json");
    std::fs::write(&wrong, json!({ "ask": 5 }).to_string()).unwrap();
    let refused = s.answer(&run, &wrong);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("error[INPUT_INVALID]"), "{}", stderr(&refused));
    assert_eq!(s.record(&run)["status"], "waiting");

    // Answered: the run resumes; `first` keeps its output, `second` reads the answer.
    let answered = s.answer(&run, &s.answers);
    assert!(answered.status.success(), "{}", stderr(&answered));
    assert!(stderr(&answered).contains("step `first` pinned from an earlier run"), "{}", stderr(&answered));
    assert_eq!(s.calls(), ["first", "second blue"], "each call exactly once");

    // The waiting run is settled, and the run that resumed it says so.
    assert_eq!(s.record(&run)["status"], "interrupted");
    let runs: Value = serde_json::from_str(&stdout(&s.mcpflow(&["runs", "--json"]))).unwrap();
    let resumed = runs.as_array().unwrap().iter().find(|r| r["resumed_from"] == json!(run)).unwrap();
    assert_eq!(resumed["status"], "succeeded");
    assert_eq!(resumed["envelope"]["output"], json!({ "recorded": "second blue" }), "{resumed}");
    assert!(stdout(&s.mcpflow(&["runs", "--waiting"])).contains("no run waits for an answer"));

    // Answered once: a second answer is refused, and names the run that resumed it.
    let again = s.answer(&run, &s.answers);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("error[QUESTION_NOT_OPEN]"), "{}", stderr(&again));
    assert!(stderr(&again).contains(resumed["id"].as_str().unwrap()), "{}", stderr(&again));
    assert_eq!(s.calls(), ["first", "second blue"]);
}

#[test]
fn ctrl_c_while_a_run_waits_leaves_it_waiting_with_how_to_answer() {
    let s = setup();
    let (mut child, run) = s.start_waiting();
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(s.record(&run)["status"], "waiting");
    let text = stdout(&s.mcpflow(&["runs", "--waiting"]));
    assert!(text.contains(&run), "{text}");

    let answered = s.answer(&run, &s.answers);
    assert!(answered.status.success(), "{}", stderr(&answered));
    assert_eq!(s.calls(), ["first", "second blue"]);
}

#[test]
fn without_wait_a_run_nobody_can_answer_fails_input_required_and_does_not_wait() {
    let s = setup();
    // No silent wait: the run ends, failed with INPUT_REQUIRED (one that waited would not end).
    let out = s.mcpflow(&[
        "run",
        "--store",
        "--allow-all-servers",
        "--servers",
        Setup::path(&s.servers),
        Setup::path(&s.file),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("error[INPUT_REQUIRED] in step `ask`"), "{}", stderr(&out));
    assert!(stdout(&s.mcpflow(&["runs", "--waiting"])).contains("no run waits for an answer"));
    assert_eq!(s.calls(), ["first"]);
}

/// The daemon's scheduled run waits at `ask` (nobody is there to answer: it waits in the
/// application); SIGTERM stops the daemon and leaves the run waiting; the next daemon
/// says which run waits and how to answer it, and `mcpflow answer` resumes it.
#[test]
fn a_run_waiting_in_the_daemon_survives_its_restart_and_is_answered_after() {
    let s = setup();
    // A stored blueprint that fires once, a moment after the daemon starts.
    let at = chrono::Utc::now() + chrono::Duration::seconds(2);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&s.file).unwrap()).unwrap();
    doc["schedule"] = json!({ "at": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true) });
    std::fs::write(&s.file, doc.to_string()).unwrap();
    let imported = s.mcpflow(&["import", Setup::path(&s.file)]);
    assert!(imported.status.success(), "{}", stderr(&imported));

    let daemon = |s: &Setup| {
        s.cmd(&["daemon", "--allow-all-servers", "--servers", Setup::path(&s.servers)])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let stop = |child: Child| {
        let sent = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        child.wait_with_output().unwrap()
    };
    // The daemon says when the scheduled run comes to wait at `ask` (after `first`).
    let mut child = daemon(&s);
    let (said, rest) = crate::spawned::said_on_stderr(&mut child, "waits for an answer");
    assert!(said.contains("waits for an answer at step `ask`"), "{said}");
    assert_eq!(s.calls(), ["first"]);
    let out = stop(child);
    assert_eq!(out.status.code(), Some(143), "{said}{}", rest.after_the_end());

    let runs: Value = serde_json::from_str(&stdout(&s.mcpflow(&["runs", "--json"]))).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "{runs}");
    let run = runs[0]["id"].as_str().unwrap().to_owned();
    assert_eq!((&runs[0]["status"], &runs[0]["trigger"]), (&json!("waiting"), &json!("schedule")), "{runs}");

    // The next daemon fires nothing more (`at` fired) and says what waits: read its
    // stderr until it has said so, then stop it.
    let mut child = daemon(&s);
    let (mut said, rest) = crate::spawned::said_on_stderr(&mut child, "waits for an answer");
    let out = stop(child);
    assert_eq!(out.status.code(), Some(143), "{said}");
    said.push_str(&rest.after_the_end());
    assert!(
        said.contains(&format!(
            "run {run} waits for an answer at step `ask`: Which colour?; answer it with `mcpflow answer {run} ask --answers FILE`"
        )),
        "{said}"
    );
    assert_eq!(s.record(&run)["status"], "waiting");

    // A stored blueprint needs no --file.
    let answered = s.mcpflow(&[
        "answer",
        &run,
        "ask",
        "--answers",
        Setup::path(&s.answers),
        "--allow-all-servers",
        "--servers",
        Setup::path(&s.servers),
    ]);
    assert!(answered.status.success(), "{}", stderr(&answered));
    assert_eq!(s.calls(), ["first", "second blue"], "each call exactly once");
}

/// A 2025-11-25 server's elicitation (server-everything's `trigger-elicitation-request`)
/// left waiting: its connection dies with the process, so answering calls the tool
/// again, and the server's question gets the answer.
#[test]
fn a_servers_question_left_waiting_is_answered_by_calling_the_tool_again() {
    let s = setup();
    let dir = s._dir.path();
    let everything = repo().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let servers = dir.join("everything.json");
    let entry = json!({ "command": "node", "args": [everything.display().to_string()] });
    std::fs::write(&servers, json!({ "mcpServers": { "everything": entry } }).to_string()).unwrap();
    let file = dir.join("elicit.json");
    let doc = json!({ "blueprint": 1, "id": "elicit", "steps": [
        { "id": "ask", "kind": "tool", "server": "everything", "tool": "trigger-elicitation-request", "args": {} }
    ]});
    std::fs::write(&file, doc.to_string()).unwrap();
    let (mut child, run) = s.start_waiting_on(&servers, &file, "Please provide inputs for the following fields:");
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));

    let text = stdout(&s.mcpflow(&["runs", "--waiting"]));
    assert!(text.contains(&format!("{run}  elicit")) && text.contains("name (string, required)"), "{text}");
    let answers = dir.join("elicit-answers.json");
    std::fs::write(&answers, json!({ "ask": { "name": "Ada" } }).to_string()).unwrap();
    let answered = s.mcpflow(&[
        "answer",
        &run,
        "ask",
        "--answers",
        Setup::path(&answers),
        "--file",
        Setup::path(&file),
        "--allow-all-servers",
        "--servers",
        Setup::path(&servers),
        "--json",
    ]);
    assert!(answered.status.success(), "{}", stderr(&answered));
    let envelope: Value = serde_json::from_str(&stdout(&answered)).unwrap();
    assert_eq!(envelope["summary"]["tool_calls"], 1, "{envelope}");
    let text = envelope["output"].to_string();
    assert!(text.contains("Name: Ada"), "{envelope}");
}
