//! The hard limits of format v1. Each one ends in a typed diagnostic, never a crash.

/// Largest blueprint document, in bytes (5 MB).
pub const MAX_BLUEPRINT_BYTES: usize = 5 * 1024 * 1024;
/// Deepest JSON nesting (objects and arrays) in a blueprint.
pub const MAX_JSON_DEPTH: usize = 64;
/// Longest template expression, in bytes.
pub const MAX_EXPRESSION_BYTES: usize = 4 * 1024;
/// Deepest bracket / parenthesis / prefix-operator nesting inside one expression.
pub const MAX_EXPRESSION_DEPTH: usize = 32;
/// Most steps in a blueprint, loop bodies included.
pub const MAX_STEPS: usize = 10_000;
/// Deepest nesting of loops inside loops.
pub const MAX_LOOP_DEPTH: usize = 8;
/// Default `max_iterations` of an `until` loop. A `for_each` has none: it is bounded by
/// its list (and the list by `limits.max_value_bytes`); an explicit `max_iterations` still
/// caps it.
pub const DEFAULT_UNTIL_MAX_ITERATIONS: u32 = 1_000;
/// Most iterations of one loop in flight at once: a larger `concurrency` runs this many,
/// so a long list never has a frame per element allocated up front.
pub const MAX_LOOP_CONCURRENCY: u32 = 1_000;
/// Default `limits.max_step_runs`: step executions in one run, every loop iteration and
/// retry counted.
pub const DEFAULT_MAX_STEP_RUNS: u64 = 1_000_000;
/// Default `limits.max_value_bytes`: the largest value (as JSON) a template may build or
/// a step may output in a run (64 MB).
pub const DEFAULT_MAX_VALUE_BYTES: u64 = 64 * 1024 * 1024;
/// Smallest `limits.max_value_bytes` a blueprint may set (1 KB).
pub const MIN_MAX_VALUE_BYTES: u64 = 1024;
/// Largest `limits.max_value_bytes` a blueprint may set (1 GB).
pub const MAX_MAX_VALUE_BYTES: u64 = 1024 * 1024 * 1024;
/// Default `limits.max_value_depth`: the deepest nesting of arrays and objects in a value
/// a template builds, a server answers, a run is given (inputs, saved values) or a step
/// outputs. Every walk over a value is bounded by it, so nothing recurses on data past it.
pub const DEFAULT_MAX_VALUE_DEPTH: u32 = 64;
/// Largest `limits.max_value_depth` a blueprint may set. Every record that holds a value
/// (an event, a run's output, an export) wraps it in fewer than 28 more levels, so what
/// is recorded stays within serde_json's 128 levels and is always read back.
pub const MAX_MAX_VALUE_DEPTH: u32 = 100;
/// Operations one template evaluation may take: every expression node visited, every
/// element a projection, filter, flatten, comparison or function walks, `n log n` for a
/// sort. Past it the template fails (`TEMPLATE_TOO_COSTLY`) instead of holding the run's
/// thread: at most a few hundred milliseconds of work.
pub const MAX_TEMPLATE_OPS: u64 = 10_000_000;

use crate::diagnostic::{Code, Diagnostic, Position};

/// How much of one kind of document mcpflow reads, and what to say past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimit<'a> {
    /// The most bytes the document may have.
    pub bytes: usize,
    /// What the document is, for the message ("the blueprint").
    pub what: &'a str,
    /// What to do about it.
    pub hint: &'a str,
}

impl SizeLimit<'_> {
    /// The `LIMIT_SIZE` diagnostic, at 1:1.
    pub fn exceeded(&self) -> Diagnostic {
        Diagnostic::new(
            Code::LimitSize,
            "",
            format!("{} is larger than the limit of {} bytes ({})", self.what, self.bytes, human(self.bytes)),
        )
        .with_hint(self.hint)
        .at(Position { line: 1, col: 1 })
    }
}

fn human(bytes: usize) -> String {
    const MB: usize = 1024 * 1024;
    match bytes {
        b if b >= 1024 * MB && b % (1024 * MB) == 0 => format!("{} GB", b / (1024 * MB)),
        b if b >= MB && b % MB == 0 => format!("{} MB", b / MB),
        b => format!("{b} bytes"),
    }
}

/// Blueprint files, from disk, standard input, an import or an agent.
pub const BLUEPRINT_SIZE: SizeLimit<'static> = SizeLimit {
    bytes: MAX_BLUEPRINT_BYTES,
    what: "the blueprint",
    hint: "move large data out of the blueprint: pass it as an input or read it with a resource step",
};
/// `mcpServers` files (`--servers`, the studio's Import servers).
pub const SERVERS_FILE_SIZE: SizeLimit<'static> =
    SizeLimit { bytes: 5 * 1024 * 1024, what: "the servers file", hint: "an mcpServers file lists servers only" };
/// `--inputs` files: inputs may carry data, so they may be larger than a blueprint.
pub const INPUTS_FILE_SIZE: SizeLimit<'static> = SizeLimit {
    bytes: 16 * 1024 * 1024,
    what: "the inputs file",
    hint: "pass larger data through a resource or a tool the blueprint calls, not as an input",
};
/// `--answers` files: a person's answers to a run's questions.
pub const ANSWERS_FILE_SIZE: SizeLimit<'static> = SizeLimit {
    bytes: 1024 * 1024,
    what: "the answers file",
    hint: "an answers file holds a few values per step; pass data through inputs instead",
};
/// `validate --catalog` files.
pub const CATALOG_FILE_SIZE: SizeLimit<'static> =
    SizeLimit { bytes: 16 * 1024 * 1024, what: "the tool catalog", hint: "list only the servers the blueprints use" };
/// `<blueprint>.saved.json` files of `mcpflow run` (values saved by earlier runs).
pub const SAVED_FILE_SIZE: SizeLimit<'static> = SizeLimit {
    bytes: 256 * 1024 * 1024,
    what: "the saved values file",
    hint: "saved values are meant for cursors and small state; save less, or delete the file to start afresh",
};
/// Store backups (`mcpflow import`): read streamed, never whole in one buffer.
pub const BACKUP_SIZE: SizeLimit<'static> = SizeLimit {
    bytes: 1024 * 1024 * 1024,
    what: "the store backup",
    hint: "a backup this large cannot be imported; set MCPFLOW_MAX_BACKUP_BYTES to allow a larger one",
};
