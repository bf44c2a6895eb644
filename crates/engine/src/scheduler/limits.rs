//! The run's limits and the counts they bound: calls at once against `concurrency`,
//! steps started against `max_step_runs`, the size and depth of values, the run's timeout.

use super::{DEFAULT_CONCURRENCY, DEFAULT_MAX_STEP_RUNS};
use mcpflow_blueprint::Blueprint;
use mcpflow_blueprint::limits::{DEFAULT_MAX_VALUE_BYTES, DEFAULT_MAX_VALUE_DEPTH};

#[derive(Debug)]
pub(super) struct Limits {
    /// `limits.concurrency`: calls (tools, resources, prompts, sub-workflows) at once.
    pub(super) concurrency: u32,
    /// Calls in flight.
    pub(super) running_calls: u32,
    /// `limits.max_step_runs`: step starts in the whole run.
    pub(super) max_step_runs: u64,
    /// Step starts so far.
    pub(super) step_runs: u64,
    /// `limits.max_value_bytes`: the largest value a template may build or a step output.
    pub(super) max_value_bytes: u64,
    /// `limits.max_value_depth`: the deepest a value may be nested.
    pub(super) max_value_depth: u32,
    /// `limits.timeout_ms`, or the CLI's `--timeout` over it.
    pub(super) run_timeout: Option<u64>,
    /// Tool calls made, for the summary (no limit).
    pub(super) tool_calls: u64,
}

impl Limits {
    pub(super) fn new(blueprint: &Blueprint, timeout_ms: Option<u64>) -> Self {
        let limits = blueprint.limits.clone().unwrap_or_default();
        Limits {
            concurrency: limits.concurrency.unwrap_or(DEFAULT_CONCURRENCY).max(1),
            running_calls: 0,
            max_step_runs: limits.max_step_runs.unwrap_or(DEFAULT_MAX_STEP_RUNS),
            step_runs: 0,
            max_value_bytes: limits.max_value_bytes.unwrap_or(DEFAULT_MAX_VALUE_BYTES),
            max_value_depth: limits.max_value_depth.unwrap_or(DEFAULT_MAX_VALUE_DEPTH),
            run_timeout: timeout_ms.or(limits.timeout_ms),
            tool_calls: 0,
        }
    }
}
