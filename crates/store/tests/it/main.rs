//! Integration tests of the store: a real sled database in a temporary folder, one
//! module per topic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod backup;
mod blueprints;
mod corruption;
mod open;
mod runs;
mod saved;
mod settings;
mod support;
