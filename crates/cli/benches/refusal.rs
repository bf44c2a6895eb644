//! How long `mcpflow` takes to refuse `/dev/zero` (start-up included): what
//! `tests/it/reading.rs` once bounded with a wall clock (a median under 100 ms, each under
//! 1 s) and now only checks for a hang. `cargo bench -p mcpflow-cli --bench refusal`
//! (benchmarks the binary of the profile it is built in: a release build with `cargo
//! bench`, a debug one with `cargo test --benches`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use std::process::{Command, Stdio};
use std::time::Duration;

fn refusal(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("refusing /dev/zero");
    group.sample_size(20);
    for (case, args) in [("validate FILE", ["validate", "/dev/zero"]), ("import", ["import", "/dev/zero"])] {
        group.bench_function(case, |b| {
            b.iter(|| {
                let status = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
                    .args(args)
                    .env("MCPFLOW_HOME", home.path())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .unwrap();
                assert_eq!(status.code(), Some(2), "mcpflow {args:?}");
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = refusal
}
criterion_main!(benches);
