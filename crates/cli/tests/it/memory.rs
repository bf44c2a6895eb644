//! Memory of a run measured from `/proc`: the peak RSS (VmHWM) of the `mcpflow` process
//! itself, as `scripts/measure-rss.sh` measures it; and a loop of many iterations, whose
//! finished iterations must leave only their collected value behind.

use crate::repo;
use serde_json::{Value, json};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What [`run_measured`] saw.
pub struct Peak {
    pub output: Output,
    /// Peak resident set of the process, in KiB (the last VmHWM read before it exited).
    pub hwm_kb: u64,
    pub wall: Duration,
}

/// Runs `mcpflow args…`, reading its VmHWM every 10 ms until it exits.
pub fn run_measured(args: &[&str]) -> Peak {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    command.args(args).current_dir(repo());
    measured(command)
}

/// Runs `command`, reading its VmHWM every 10 ms until it exits. A wrapper in front of
/// `mcpflow` must `exec` it (as `prlimit` does), so the pid measured is mcpflow's.
pub fn measured(command: Command) -> Peak {
    measured_within(command, Duration::from_secs(30))
}

/// [`measured`], killing the process past `limit` of wall time (or 1 GB).
pub fn measured_within(mut command: Command, limit: Duration) -> Peak {
    let started = Instant::now();
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let status = format!("/proc/{}/status", child.id());
    // Read the pipes meanwhile, so a chatty process never blocks on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).unwrap();
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).unwrap();
        b
    });
    let mut hwm_kb = 0;
    // Until it exits (a zombie has no VmHWM line any more; the last reading stays). A
    // process past 1 GB or `limit` has failed whatever the test checks: it is killed, so
    // a regression fails the test instead of taking the machine's memory.
    while child.try_wait().unwrap().is_none() {
        if let Some(kb) = std::fs::read_to_string(&status).ok().as_deref().and_then(vm_hwm_kb) {
            hwm_kb = kb;
        }
        if hwm_kb > 1024 * 1024 || started.elapsed() > limit {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = child.wait().unwrap();
    let wall = started.elapsed();
    let output = Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() };
    Peak { output, hwm_kb, wall }
}

fn vm_hwm_kb(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Iterations of the loop: with the ~4.6 KB each finished iteration used to leave
/// behind, 300 MB; the array they collect is a few MB.
const N: u64 = 1 << 16;

#[test]
fn a_loop_of_many_iterations_keeps_no_more_than_twice_the_memory_of_its_collected_array() {
    let dir = tempfile::tempdir().unwrap();
    let last = N - 1;
    let looped = json!({ "blueprint": 1, "id": "looped", "limits": { "max_step_runs": 10 * N },
        "steps": [
            { "id": "l", "kind": "loop", "until": format!("{{{{ index >= `{last}` }}}}"), "max_iterations": N,
              "steps": [ { "id": "t", "kind": "transform", "value": "{{ index }}" } ] }
        ],
        "output": "{{ l }}" });
    // The same array, without a loop: read from an inputs file.
    let flat = json!({ "blueprint": 1, "id": "flat",
        "inputs": { "type": "object", "properties": { "xs": { "type": "array" } } },
        "steps": [ { "id": "t", "kind": "transform", "value": "{{ inputs.xs }}" } ],
        "output": "{{ t }}" });
    let write = |name: &str, v: &Value| {
        let p = dir.path().join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p.display().to_string()
    };
    let (looped, flat) = (write("looped.json", &looped), write("flat.json", &flat));
    let inputs = write("inputs.json", &json!({ "xs": (0..N).collect::<Vec<_>>() }));

    let with_loop = run_measured(&["run", &looped, "--json", "-q"]);
    let without = run_measured(&["run", &flat, "--inputs", &inputs, "--json", "-q"]);
    for run in [&with_loop, &without] {
        assert_eq!(run.output.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.output.stderr));
    }
    let output = |run: &Peak| serde_json::from_slice::<Value>(&run.output.stdout).unwrap()["output"].clone();
    let collected = output(&with_loop);
    assert_eq!(collected.as_array().map(Vec::len), Some(N as usize));
    assert_eq!(collected, output(&without), "both runs produce the same array");
    let (looped_mb, flat_mb) = (with_loop.hwm_kb / 1024, without.hwm_kb / 1024);
    eprintln!("{N} iterations: peak RSS {looped_mb} MB; the same array without a loop: {flat_mb} MB");
    assert!(
        with_loop.hwm_kb <= 2 * without.hwm_kb,
        "{N} iterations: peak RSS {looped_mb} MB; the same array without a loop: {flat_mb} MB"
    );
}
