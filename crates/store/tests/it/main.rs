//! Integration tests of the store, one module per topic. Most run on both backends (see
//! `support::on_both!`): a real sled database in a temporary folder, and a database in a
//! throwaway PostgreSQL cluster on a Unix socket (`mcpflow_testkit::postgres`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[macro_use]
mod support;

mod backup;
mod blueprints;
mod corruption;
mod open;
mod postgres;
mod queue;
mod runs;
mod saved;
mod settings;
