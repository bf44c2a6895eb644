//! Every document `mcpflow` reads from outside is read within a size limit checked while
//! reading, and strictly: `/dev/zero` anywhere a file is named is refused at once with
//! `LIMIT_SIZE` and exit 2, without the memory to hold it; a key named twice is refused
//! wherever a document comes in.

use crate::{repo, stderr};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Address space the refused commands run in (`ulimit -v`, KiB): a debug `mcpflow` with
/// its runtime needs about 100 MB of it; reading `/dev/zero` to the end needs 2 GB and
/// would abort, not exit 2.
const ADDRESS_SPACE_KB: u64 = 512 * 1024;

/// Exit status of `timeout(1)` when it had to stop the command.
const HUNG: i32 = 124;

/// Runs `mcpflow args` in at most [`ADDRESS_SPACE_KB`] of address space, with `stdin`,
/// a fresh data folder and `env`. A command still reading after a minute is stopped and
/// exits [`HUNG`]: a guard against reading `/dev/zero` forever, not a speed check (how
/// fast a refusal is: `cargo bench -p mcpflow-cli --bench refusal`).
fn bounded(home: &Path, args: &[&str], stdin: Stdio, env: &[(&str, &str)]) -> Output {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {ADDRESS_SPACE_KB} && exec timeout 60 \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_mcpflow"))
        .args(args)
        .env("MCPFLOW_HOME", home)
        .envs(env.iter().copied())
        .current_dir(repo())
        .stdin(stdin)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(HUNG), "mcpflow {args:?} was still reading after a minute: {}", stderr(&out));
    out
}

fn tiny_blueprint(dir: &Path) -> String {
    let file = dir.join("x.blueprint.json");
    let doc = json!({ "blueprint": 1, "id": "x", "steps": [{ "id": "a", "kind": "transform", "value": 1 }] });
    std::fs::write(&file, doc.to_string()).unwrap();
    file.display().to_string()
}

#[test]
fn dev_zero_is_refused_everywhere_a_file_is_read_at_once_and_without_reading_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let x = tiny_blueprint(dir.path());
    let zero = "/dev/zero";
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("run FILE", vec!["run", zero]),
        ("run --servers", vec!["run", &x, "--servers", zero]),
        ("run --store --servers", vec!["run", "--store", &x, "--servers", zero]),
        ("run --inputs", vec!["run", &x, "--inputs", zero]),
        ("validate FILE", vec!["validate", zero]),
        ("validate --catalog", vec!["validate", &x, "--catalog", zero]),
        ("validate --servers", vec!["validate", &x, "--servers", zero]),
        ("rerun --file", vec!["rerun", "some-run", "a", "--file", zero]),
        ("serve --servers", vec!["serve", "--servers", zero]),
        ("daemon --servers", vec!["daemon", "--servers", zero]),
    ];
    // Refused at once: with LIMIT_SIZE at the limit, before it could read on (the address
    // space would run out first, and that aborts rather than exits 2).
    for (case, args) in &cases {
        let out = bounded(&home, args, Stdio::null(), &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{case}: {err}");
        assert!(err.contains("/dev/zero:1:1: error[LIMIT_SIZE]: "), "{case}: {err}");
    }
    // Standard input: `validate -`.
    let out = bounded(&home, &["validate", "-"], std::fs::File::open(zero).unwrap().into(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("-:1:1: error[LIMIT_SIZE]: the blueprint is larger"), "{}", stderr(&out));
    // `import` reads a backup as it parses it (a backup may be 1 GB), so NUL bytes stop
    // it at the first one, as bad JSON, before any size is reached.
    let out = bounded(&home, &["import", zero], Stdio::null(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("/dev/zero:1:1: error[JSON_SYNTAX]: "), "{}", stderr(&out));
}

/// A backup larger than a blueprint may be is read as it is parsed — never whole in
/// memory — and is still bounded: past the backup limit (lowered here with
/// `MCPFLOW_MAX_BACKUP_BYTES`) it is `LIMIT_SIZE`; under it, it imports.
#[test]
fn a_backup_is_read_streamed_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // 12 MB of whitespace inside a sound, empty backup: bigger than a blueprint may be.
    let file = dir.path().join("padded.json");
    let mut text = String::from("{\"mcpflow_store\": 1, \"schema_version\": 1,");
    text.push_str(&" ".repeat(12 << 20));
    text.push_str("\"blueprints\": []}");
    std::fs::write(&file, &text).unwrap();
    let path = file.to_str().unwrap();

    let limit = (8u64 << 20).to_string();
    let out = bounded(&home, &["import", path], Stdio::null(), &[("MCPFLOW_MAX_BACKUP_BYTES", &limit)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{path}:1:1: error[LIMIT_SIZE]: the store backup is larger than the limit of 8388608 bytes (8 MB)"
        )),
        "{err}"
    );
    assert!(err.contains("MCPFLOW_MAX_BACKUP_BYTES"), "{err}");

    // Under the default limit (1 GB) the same file imports: the size alone is no fault.
    let out = bounded(&home, &["import", path], Stdio::null(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("imported a store backup"), "{}", stderr(&out));
}

/// The document of the issue: the second `value` is at line 5, column 50.
const DUPLICATE: &str = "{\n  \"blueprint\": 1,\n  \"id\": \"dup\",\n  \"steps\": [\n    {\"id\": \"a\", \"kind\": \"transform\", \"value\": 1, \"value\": 2}\n  ]\n}\n";

#[test]
fn a_duplicate_key_is_refused_by_import_as_by_validate_in_a_blueprint_and_in_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let file = dir.path().join("dup.blueprint.json");
    std::fs::write(&file, DUPLICATE).unwrap();
    let path = file.to_str().unwrap();
    let expected = format!("{path}:5:50: error[JSON_DUPLICATE_KEY]: duplicate key `value`");

    let checked = bounded(&home, &["validate", path], Stdio::null(), &[]);
    assert!(String::from_utf8_lossy(&checked.stdout).contains(&expected), "{checked:?}");
    let out = bounded(&home, &["import", path], Stdio::null(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));

    // A small backup (read like a blueprint) and a large one (streamed), each with a
    // blueprint id named twice inside a revision.
    let backup = |padding: usize| {
        format!(
            "{{\"mcpflow_store\": 1, \"schema_version\": 1,{}\n\"blueprints\": [{{\"id\": \"a\", \"revisions\": [{{\"rev\": 1, \"saved_at\": \"t\", \"json\": {{\"blueprint\": 1, \"id\": \"a\", \"id\": \"b\", \"steps\": []}}}}]}}]}}",
            " ".repeat(padding)
        )
    };
    for (case, padding) in [("small", 0), ("streamed", 6 << 20)] {
        let file = dir.path().join(format!("{case}.json"));
        std::fs::write(&file, backup(padding)).unwrap();
        let out = bounded(&home, &["import", file.to_str().unwrap()], Stdio::null(), &[]);
        assert_eq!(out.status.code(), Some(2), "{case}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("{}:2:", file.display())), "{case}: {err}");
        assert!(err.contains("error[JSON_DUPLICATE_KEY]: duplicate key `id`"), "{case}: {err}");
        assert!(err.contains("/blueprints/0/revisions/0/json/id"), "{case}: {err}");
    }
    let listed = bounded(&home, &["export"], Stdio::null(), &[]);
    let exported: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(exported["blueprints"], json!([]), "nothing was imported");
}

/// An `--inputs` file is read strictly too: a duplicate input is an error, not the last
/// value silently winning.
#[test]
fn an_inputs_file_naming_an_input_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let x = tiny_blueprint(dir.path());
    let inputs = dir.path().join("inputs.json");
    std::fs::write(&inputs, "{\"n\": 1,\n \"n\": 2}").unwrap();
    let out = bounded(&home, &["run", &x, "--inputs", inputs.to_str().unwrap()], Stdio::null(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("{}:2:2: error[JSON_DUPLICATE_KEY]", inputs.display())), "{}", stderr(&out));
}
