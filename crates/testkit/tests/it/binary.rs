//! `binary()` finds the fixture binary cargo built for these tests.

use std::path::PathBuf;

#[test]
fn binary_is_the_one_cargo_built_for_this_profile() {
    let path = mcpflow_testkit::binary();
    assert!(path.is_file(), "{}", path.display());
    assert_eq!(path, PathBuf::from(env!("CARGO_BIN_EXE_mcpflow-testkit")));
}
