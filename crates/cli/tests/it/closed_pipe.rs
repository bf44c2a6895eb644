//! A reader that goes away (`mcpflow runs --json | head -1`) ends a command quietly, as
//! ripgrep and coreutils do: exit 0 (a run keeps its own exit code), nothing on stderr
//! about the pipe, no panic.

use crate::{repo, stderr};
use std::process::{Command, Output, Stdio};

/// Runs `mcpflow args` with its standard output a pipe whose reading end is closed
/// before it starts, so its first write to stdout finds the reader gone.
fn into_closed_pipe(home: &std::path::Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(args)
        .current_dir(repo())
        .env("MCPFLOW_HOME", home)
        .stdin(Stdio::null())
        .stdout(writer)
        .output()
        .unwrap()
}

#[test]
fn every_printing_subcommand_ends_quietly_when_its_reader_is_gone() {
    let home = tempfile::tempdir().unwrap();
    let _ = mcpflow_testkit::binary(); // demo/servers.json starts it from target/debug
    let paginate = ["workflows/paginate.blueprint.json", "--servers", "demo/servers.json", "--allow-server", "cluster"];
    let recorded = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--store", "-q"])
        .args(paginate)
        .current_dir(repo())
        .env("MCPFLOW_HOME", home.path())
        .output()
        .unwrap();
    assert!(recorded.status.success(), "recording a run failed: {}", stderr(&recorded));
    let runs = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["runs", "--json"])
        .env("MCPFLOW_HOME", home.path())
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let run_id = list[0]["id"].as_str().unwrap().to_string();

    let mut run = vec!["run", "--json", "-q"];
    run.extend(paginate);
    let commands: Vec<Vec<&str>> = vec![
        vec!["runs", "--json"],
        vec!["runs"],
        vec!["runs", "--waiting"],
        vec!["list", "--json"],
        vec!["show", &run_id],
        vec!["show", &run_id, "--events"],
        vec!["show", &run_id, "--json"],
        vec!["export"],
        vec!["schema"],
        vec!["validate", "--json", "workflows/paginate.blueprint.json"],
        vec!["validate", "crates/blueprint/tests/corpus/dependency-cycle-two-steps.json"],
        vec!["servers", "--servers", "demo/servers.json"],
        vec!["servers", "--servers", "demo/servers.json", "--json"],
        vec!["auth", "status", "--servers", "demo/servers.json"],
        vec!["setup", "claude-desktop", "--print"],
        vec!["test", "workflows/tests/pipeline-prev.test.json"],
        vec!["--help"],
        vec!["help", "run"],
        run,
    ];
    for args in &commands {
        let out = into_closed_pipe(home.path(), args);
        let err = stderr(&out);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("os error 32"),
            "`mcpflow {}` into a closed pipe did not end quietly:\n{err}",
            args.join(" ")
        );
        // `validate` of a broken blueprint exits 1 for its errors before it prints them.
        let expected = if args[0] == "validate" && !args.contains(&"--json") { [0, 1] } else { [0, 0] };
        assert!(
            expected.contains(&out.status.code().unwrap_or(-1)),
            "`mcpflow {}` into a closed pipe exited {:?}, expected {expected:?}:\n{err}",
            args.join(" "),
            out.status.code()
        );
    }
}
