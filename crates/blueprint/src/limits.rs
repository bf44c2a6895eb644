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
/// Default `max_iterations` for both loop forms.
pub const DEFAULT_MAX_ITERATIONS: u32 = 1_000;
/// Default `limits.max_value_bytes`: the largest value (as JSON) a template may build or
/// a step may output in a run (64 MB).
pub const DEFAULT_MAX_VALUE_BYTES: u64 = 64 * 1024 * 1024;
/// Smallest `limits.max_value_bytes` a blueprint may set (1 KB).
pub const MIN_MAX_VALUE_BYTES: u64 = 1024;
/// Largest `limits.max_value_bytes` a blueprint may set (1 GB).
pub const MAX_MAX_VALUE_BYTES: u64 = 1024 * 1024 * 1024;
