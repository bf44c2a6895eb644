//! The README's quickstart works as written: every `target/debug/mcpflow` line of its
//! first `sh` block runs, from the repository root, with the binary under test and a
//! fresh data folder, and succeeds. The setup lines (`npm ci`, `cargo build …`) are
//! what a test run has already done; a line of any other kind fails the test, so the
//! quickstart and this test change together.

use crate::{repo, stderr, stdout};
use std::process::Command;

const QUICKSTART: &str = "## Quickstart";
const BINARY: &str = "target/debug/mcpflow ";
const SETUP: &[&str] = &["npm ci", "cargo build -p mcpflow-cli -p mcpflow-testkit"];

#[test]
fn the_readme_quickstart_runs_verbatim() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = quickstart(&readme);
    assert!(lines.iter().any(|line| line.starts_with(BINARY)), "the quickstart runs no `{BINARY}` line: {lines:?}");
    // The setup lines' results: node_modules from `npm ci`, the fixture server from cargo.
    let everything = repo().join("node_modules/@modelcontextprotocol/server-everything");
    assert!(everything.is_dir(), "{} is missing: run `npm ci` in the repository root", everything.display());
    let _ = mcpflow_testkit::binary();

    let home = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_mcpflow");
    for line in &lines {
        if SETUP.contains(&line.as_str()) {
            continue;
        }
        let Some(args) = line.strip_prefix(BINARY) else {
            panic!(
                "README quickstart line `{line}` is neither setup ({SETUP:?}) nor `{BINARY}…`: teach this test to run it"
            );
        };
        // Through the shell, for the globs (`workflows/*.blueprint.json`).
        let out = Command::new("bash")
            .args(["-c", &format!("exec \"$MCPFLOW_BIN\" {args}")])
            .env("MCPFLOW_BIN", bin)
            .env("MCPFLOW_HOME", home.path())
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README quickstart line `{line}` exited {:?}\nstdout:\n{}\nstderr:\n{}",
            out.status.code(),
            stdout(&out),
            stderr(&out)
        );
        if args.trim() == "runs" {
            assert!(stdout(&out).contains("succeeded"), "`mcpflow runs` lists no recorded run:\n{}", stdout(&out));
        }
    }
}

/// The lines of the first ```sh block after the quickstart's heading.
fn quickstart(readme: &str) -> Vec<String> {
    let Some(at) = readme.find(QUICKSTART) else {
        panic!("README.md has no `{QUICKSTART}` section");
    };
    let section = &readme[at..];
    let Some(start) = section.find("```sh\n") else {
        panic!("README.md's quickstart has no ```sh block");
    };
    let block = &section[start + "```sh\n".len()..];
    let end = block.find("```").unwrap_or(block.len());
    block[..end].lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_string).collect()
}
