//! Templates that multiply memory (issue 13, item 2): `mcpflow run` of a small blueprint
//! that doubles or decuples a value each step ends with `TEMPLATE_TOO_LARGE` naming the
//! step, and the process's peak RSS stays small.
//!
//! Each run is capped (`prlimit --as`, 3 GB of address space) so that, should the budget
//! not hold, the child fails on its own instead of taking the shared machine with it;
//! its peak RSS is the VmHWM of the `mcpflow` process itself ([`crate::memory::measured`]).

use crate::memory::{Peak, measured};
use crate::{repo, stderr};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

const MAX_RSS_KB: u64 = 200 * 1024;
const ADDRESS_SPACE_CAP: &str = "--as=3221225472";

/// Runs `mcpflow run <bp> --json [extra]` under the cap; returns the output and the
/// process's peak RSS in kB.
fn run_capped(dir: &Path, bp: &Value, extra: &[&str]) -> (Output, u64) {
    let file = dir.join("bp.json");
    std::fs::write(&file, serde_json::to_string_pretty(bp).unwrap()).unwrap();
    let mut command = Command::new("prlimit");
    command
        .args([ADDRESS_SPACE_CAP, "--"])
        .arg(env!("CARGO_BIN_EXE_mcpflow"))
        .arg("run")
        .arg(&file)
        .arg("--json")
        .args(extra)
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.join("home"));
    let Peak { output, hwm_kb, .. } = measured(command);
    (output, hwm_kb)
}

fn envelope(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no envelope ({e}); status {:?}; stderr:\n{}", out.status, stderr(out)))
}

#[test]
fn a_chain_of_doubling_transforms_stops_at_the_default_limit() {
    let dir = tempfile::tempdir().unwrap();
    // Each step holds its input twice: 2^k leaves after k steps, cheap while shared.
    // Counted as its JSON (6·2^k bytes) plus 64 bytes per JSON value, `d19` is the
    // first past the default 64 MB (70 MB; `d18` is 35 MB). Before the budget, 24
    // steps took 6.3 GB and 26 aborted.
    let mut steps = vec![json!({ "id": "d0", "kind": "transform", "value": "x" })];
    for i in 1..=26 {
        steps.push(json!({ "id": format!("d{i}"), "kind": "transform", "value": "{{ [prev, prev] }}" }));
    }
    let bp = json!({ "blueprint": 1, "id": "doubling", "steps": steps });
    let (out, kb) = run_capped(dir.path(), &bp, &[]);
    let env = envelope(&out);
    assert_eq!(env["status"], "failed", "{env}");
    assert_eq!(env["errors"][0]["code"], "TEMPLATE_TOO_LARGE", "{env}");
    assert_eq!(env["errors"][0]["step"], "d19", "{env}");
    let message = env["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("limits.max_value_bytes"), "{message}");
    assert!(kb < MAX_RSS_KB, "peak RSS {kb} kB");
}

#[test]
fn chained_joins_of_a_large_input_stop_at_the_default_limit() {
    let dir = tempfile::tempdir().unwrap();
    let tenfold = "join('', [@, @, @, @, @, @, @, @, @, @])";
    let bp = json!({ "blueprint": 1, "id": "joins",
        "inputs": { "type": "object", "properties": { "s": { "type": "string" } }, "required": ["s"] },
        "steps": [
            { "id": "j1", "kind": "transform", "value": format!("{{{{ inputs.s | {tenfold} }}}}") },
            { "id": "j2", "kind": "transform", "value": format!("{{{{ prev | {tenfold} }}}}") },
            { "id": "j3", "kind": "transform", "value": format!("{{{{ prev | {tenfold} }}}}") },
            { "id": "j4", "kind": "transform", "value": format!("{{{{ prev | {tenfold} }}}}") }
        ] });
    // 100 KB → 1 MB → 10 MB → 100 MB: `j3` passes the default 64 MB.
    let inputs = dir.path().join("inputs.json");
    std::fs::write(&inputs, json!({ "s": "a".repeat(100 * 1024) }).to_string()).unwrap();
    let (out, kb) = run_capped(dir.path(), &bp, &["--inputs", inputs.to_str().unwrap()]);
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "TEMPLATE_TOO_LARGE", "{env}");
    assert_eq!(env["errors"][0]["step"], "j3", "{env}");
    assert!(kb < MAX_RSS_KB, "peak RSS {kb} kB");
}

#[test]
fn a_loop_collecting_past_the_limit_fails_with_output_too_large() {
    let dir = tempfile::tempdir().unwrap();
    // Each iteration collects 10 KB; 200 of them pass a 1 MB limit only together.
    let bp = json!({ "blueprint": 1, "id": "collect", "limits": { "max_value_bytes": 1_048_576 },
        "inputs": { "type": "object", "properties": { "s": { "type": "string" } }, "required": ["s"] },
        "steps": [
            { "id": "many", "kind": "loop", "for_each": (0..200).collect::<Vec<_>>(),
              "collect": "{{ inputs.s }}", "steps": [ { "id": "noop", "kind": "transform", "value": 1 } ] }
        ] });
    let inputs = dir.path().join("inputs.json");
    std::fs::write(&inputs, json!({ "s": "b".repeat(10 * 1024) }).to_string()).unwrap();
    let (out, kb) = run_capped(dir.path(), &bp, &["--inputs", inputs.to_str().unwrap()]);
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "OUTPUT_TOO_LARGE", "{env}");
    assert_eq!(env["errors"][0]["step"], "many", "{env}");
    assert!(kb < MAX_RSS_KB, "peak RSS {kb} kB");
}
