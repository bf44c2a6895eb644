//! Integration tests: each fixture driven by a real rmcp client, in-process and as a child process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod binary;
mod cluster;
mod echo;
mod faulty;
mod support;
