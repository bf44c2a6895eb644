//! Integration tests of the blueprint crate: one binary, a module per topic.

// Test helpers outside #[test] functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod catalog;
mod corpus;
mod docs;
mod examples;
mod fuzz_regressions;
mod limits;
mod schema;
mod templates;

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The codes of a report's diagnostics, as strings.
pub fn codes(report: &mcpflow_blueprint::Report) -> Vec<&'static str> {
    report.diagnostics.iter().map(|d| d.code.name()).collect()
}
