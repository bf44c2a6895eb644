//! `mcpflow test FILE.test.json…`: each test's blueprint run over its cassette, no server
//! started; one line per test, exit 0 when all pass, 1 when any fails.

use crate::run::{block_on, cancel_on_signals};
use crate::stdout::{outln, unless_closed};
use anyhow::Context as _;
use clap::Args;
use mcpflow_app::cassette::suite;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Test files (`*.test.json`): a blueprint, its inputs, a cassette, expectations.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Also write the results as JUnit XML to FILE, for CI.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

pub fn run(args: TestArgs) -> ExitCode {
    block_on(execute(args))
}

async fn execute(args: TestArgs) -> anyhow::Result<ExitCode> {
    let stop = cancel_on_signals()?;
    let mut verdicts = Vec::new();
    for file in &args.files {
        let verdict = suite::run_test(file, stop.token().clone()).await;
        match &verdict.failure {
            None => unless_closed(outln!("pass {}", file.display()))?,
            Some(why) => unless_closed(outln!("FAIL {}: {why}", file.display()))?,
        }
        verdicts.push(verdict);
    }
    let failed = verdicts.iter().filter(|v| !v.passed()).count();
    unless_closed(outln!("{} passed, {failed} failed", verdicts.len() - failed))?;
    if let Some(path) = &args.junit {
        std::fs::write(path, suite::junit(&verdicts))
            .with_context(|| format!("cannot write the JUnit report {}", path.display()))?;
    }
    Ok(ExitCode::from(u8::from(failed > 0)))
}
