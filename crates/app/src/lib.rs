//! The use cases every front door shares. The CLI and the desktop shell decode their
//! input, call one function here, and present the result.
//!
//! - [`headless`]: run one blueprint file with servers from `mcpServers` files
//!   (`mcpflow run`).
//! - [`App`]: the long-lived application over the store — [`blueprints`] (save with
//!   validation, list, get, delete), [`runs`] (start with recording and broadcast,
//!   control, history), [`pipeline`] (`run_pipeline`), [`servers`] (configs, consent,
//!   connection tests), [`server_report`] (`mcpflow servers`: list and test).
//! - [`cassette`]: recording a run's MCP exchanges (`run --record`) and replaying them
//!   without servers (`mcpflow test`).
//! - [`auth`]: signing in to OAuth servers (status, login through the browser, logout).
//! - [`people`]: answering a run's questions headless (`--answers`, the terminal).
//! - [`signals`]: SIGINT, SIGTERM and SIGHUP as cancellation, with their exit codes.
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

pub mod advice;
pub mod app;
pub mod auth;
pub mod authenticator;
pub mod backup;
pub mod blueprints;
pub mod cassette;
pub mod error;
pub mod files;
pub mod headless;
pub mod home;
pub mod listings;
mod logs;
pub mod people;
pub mod pipeline;
pub mod portable;
pub mod preview;
pub mod runs;
pub mod sampling;
pub mod server_report;
pub mod servers;
pub mod settings;
pub mod setup;
pub mod signals;
mod steps;
pub mod telemetry;
pub mod testing;

pub use app::{App, AppOptions, Change};
pub use error::AppError;
pub use mcpflow_store::{BlueprintMeta, RunList, RunRecord, Unreadable};
