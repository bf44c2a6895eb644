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
    // Counted as its JSON (6·2^k bytes) plus 16 bytes per string and 112 per array,
    // `d19` is the first past the default 64 MB (70 MB; `d18` is 35 MB). Before the
    // budget, 24 steps took 6.3 GB and 26 aborted.
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

/// An `until` loop whose body wraps `last` in 80 more arrays each iteration: 50 written
/// as arrays around the template, 30 built by it.
pub fn deepening_blueprint(max_value_depth: Option<u32>) -> Value {
    let built = format!("{{{{ {}last{} }}}}", "[".repeat(30), "]".repeat(30));
    let wrap = (0..50).fold(json!(built), |v, _| json!([v]));
    let mut bp = json!({ "blueprint": 1, "id": "deepening", "steps": [
        { "id": "grow", "kind": "loop", "until": "{{ `false` }}", "max_iterations": 1000,
          "steps": [ { "id": "wrap", "kind": "transform", "value": wrap } ] }
    ] });
    if let Some(depth) = max_value_depth {
        bp["limits"] = json!({ "max_value_depth": depth });
    }
    bp
}

#[test]
fn a_value_nested_deeper_each_iteration_fails_its_step_at_the_depth_limit() {
    // Before the limit, a recursive walk overflowed the stack at ~33,000 levels
    // (iteration ~420) and the process aborted.
    let dir = tempfile::tempdir().unwrap();
    for (limit, iteration) in [(None, 0), (Some(100), 1)] {
        let (out, kb) = run_capped(dir.path(), &deepening_blueprint(limit), &[]);
        let env = envelope(&out);
        assert_eq!(out.status.code(), Some(1), "{env}");
        assert_eq!(env["errors"][0]["code"], "TEMPLATE_TOO_DEEP", "{env}");
        assert_eq!(env["errors"][0]["step"], "wrap", "{env}");
        assert_eq!(env["errors"][0]["path"], json!([iteration]), "{env}");
        let message = env["errors"][0]["message"].as_str().unwrap_or_default();
        let depth = limit.unwrap_or(64).to_string();
        assert!(message.contains("limits.max_value_depth") && message.contains(&depth), "{message}");
        assert!(kb < MAX_RSS_KB, "peak RSS {kb} kB");
    }
}

#[test]
fn flattening_a_value_multiplied_by_multi_selects_stops_before_copying_it() {
    // 10,000 numbers held 10,000 times over by four ten-fold multi-selects (shared, so
    // cheap), then flattened: before the flatten was charged, the copies took ~1.6 GB.
    let dir = tempfile::tempdir().unwrap();
    let tenfold = "[@, @, @, @, @, @, @, @, @, @]";
    let expression = format!("length(inputs.xs | {tenfold} | {tenfold} | {tenfold} | {tenfold} | [][][][][])");
    let bp = json!({ "blueprint": 1, "id": "flatten",
        "inputs": { "type": "object", "properties": { "xs": { "type": "array" } }, "required": ["xs"] },
        "steps": [ { "id": "flat", "kind": "transform", "value": format!("{{{{ {expression} }}}}") } ] });
    let inputs = dir.path().join("inputs.json");
    std::fs::write(&inputs, json!({ "xs": (0..10_000).collect::<Vec<_>>() }).to_string()).unwrap();
    let (out, kb) = run_capped(dir.path(), &bp, &["--inputs", inputs.to_str().unwrap()]);
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "TEMPLATE_TOO_LARGE", "{env}");
    assert_eq!(env["errors"][0]["step"], "flat", "{env}");
    assert!(kb < MAX_RSS_KB, "peak RSS {kb} kB");
}

#[test]
fn sorting_a_large_list_thousands_of_times_stops_at_the_operation_budget() {
    // 10,000 sorts of 100,000 numbers: before the budget, minutes on the run's thread.
    let dir = tempfile::tempdir().unwrap();
    let bp = json!({ "blueprint": 1, "id": "sorts",
        "inputs": { "type": "object", "properties": { "n": { "type": "array" } }, "required": ["n"] },
        "steps": [ { "id": "sorts", "kind": "transform",
            "value": "{{ length(map(&sort(@), [inputs.n] | [@, @, @, @, @, @, @, @, @, @][] | [@, @, @, @, @, @, @, @, @, @][] | [@, @, @, @, @, @, @, @, @, @][] | [@, @, @, @, @, @, @, @, @, @][])) }}" } ] });
    let inputs = dir.path().join("inputs.json");
    std::fs::write(&inputs, json!({ "n": (0..100_000).rev().collect::<Vec<_>>() }).to_string()).unwrap();
    let (out, _) = run_capped(dir.path(), &bp, &["--inputs", inputs.to_str().unwrap()]);
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "TEMPLATE_TOO_COSTLY", "{env}");
    assert_eq!(env["errors"][0]["step"], "sorts", "{env}");
}

#[test]
fn an_answer_of_millions_of_tiny_values_is_refused_before_it_is_parsed() {
    // 44 MiB of `[]`: within the 64 MiB message limit, but ~15 million values. Parsed
    // whole it took 3.1–3.3 GB; weighed first, it is refused unparsed.
    let dir = tempfile::tempdir().unwrap();
    let bin = mcpflow_testkit::binary().display().to_string();
    let servers = dir.path().join("servers.json");
    std::fs::write(&servers, json!({ "mcpServers": { "faulty": { "command": bin, "args": ["faulty"] } } }).to_string())
        .unwrap();
    let bp = json!({ "blueprint": 1, "id": "heavy", "steps": [
        { "id": "h", "kind": "tool", "server": "faulty", "tool": "heavy", "args": { "mb": 44 } } ] });
    let servers = servers.display().to_string();
    let (out, kb) = run_capped(dir.path(), &bp, &["--servers", &servers, "--allow-all-servers"]);
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "OUTPUT_TOO_LARGE", "{env}");
    assert_eq!(env["errors"][0]["step"], "h", "{env}");
    let message = env["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("so many values"), "{message}");
    // The 44 MiB line itself is read into one buffer; nothing is parsed.
    assert!(kb < 2 * MAX_RSS_KB, "peak RSS {kb} kB");
}

#[test]
fn an_inputs_file_of_millions_of_tiny_values_is_refused_before_it_is_parsed() {
    // 15 MiB of `[]`, within the 16 MB file limit: parsed whole it took 1.9 GB.
    let dir = tempfile::tempdir().unwrap();
    let bp = json!({ "blueprint": 1, "id": "inputs", "steps": [ { "id": "n", "kind": "transform", "value": 1 } ] });
    let inputs = dir.path().join("inputs.json");
    std::fs::write(&inputs, format!("{{\"xs\": [{}[]]}}", "[],".repeat(5 * 1024 * 1024))).unwrap();
    let (out, kb) = run_capped(dir.path(), &bp, &["--inputs", inputs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("LIMIT_SIZE") && said.contains("limits.max_value_bytes") && said.contains("inputs.json:1:1"),
        "{said}"
    );
    assert!(kb < MAX_RSS_KB, "peak RSS {kb} kB");
}

#[test]
fn an_inputs_file_of_a_million_small_numbers_fits_under_the_default_limit() {
    // 6.9 MB of JSON, a million numbers: 22.9 MB as `limits.max_value_bytes` counts it
    // (16 bytes a number). At 64 bytes a value it was 71 MB, refused by default.
    let dir = tempfile::tempdir().unwrap();
    let bp = json!({ "blueprint": 1, "id": "million",
        "inputs": { "type": "object", "properties": { "items": { "type": "array" } }, "required": ["items"] },
        "steps": [ { "id": "n", "kind": "transform", "value": "{{ length(inputs.items) }}" } ] });
    let inputs = dir.path().join("inputs.json");
    std::fs::write(&inputs, json!({ "items": (0..1_000_000).collect::<Vec<u32>>() }).to_string()).unwrap();
    let (out, kb) = run_capped(dir.path(), &bp, &["--inputs", inputs.to_str().unwrap()]);
    let env = envelope(&out);
    assert_eq!(env["status"], "succeeded", "{env}");
    assert_eq!(env["output"], 1_000_000, "{env}");
    // Not yet bounded like the refusals above: the parsed inputs are held several times
    // over (the file's tree, the run's copy, the template scope's), ~400 MB here (issue 35).
    assert!(kb < 3 * MAX_RSS_KB, "peak RSS {kb} kB");
}
