//! Integration tests of signing in: the OAuth grants against the testkit's OAuth fixture
//! (`flow`) and the token vault against a real Secret Service (`keyring`). What needs the
//! pool (more scope after a refused call) is in `crates/mcp/tests/it/step_up.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod flow;
mod keyring;
