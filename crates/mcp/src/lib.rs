//! mcpflow's MCP client pool over rmcp: the servers of the app/CLI config (`mcpServers`
//! files as Claude Desktop and Cursor write them) and of a blueprint, started lazily as
//! stdio child processes or reached over streamable HTTP; discovery of their tools,
//! resources and prompts; routing by tool name; timeouts, cancellation, progress,
//! concurrency limits, restart after a crash and reaping.
//!
//! - Server configs are read and merged by `mcpflow-config` (re-exported here:
//!   [`ServerConfigs`], [`ServerEntry`], [`EnvLookup`]); signing in to HTTP servers is
//!   `mcpflow-auth` (an [`mcpflow_auth::Authenticator`] in [`PoolOptions`]).
//! - [`consent`]: a stdio command starts only if its exact command line was approved; a
//!   blueprint's HTTP server that sends a variable or leaves the machine, only if approved.
//! - [`pool`]: [`Pool`], which also implements the engine's [`mcpflow_engine::Servers`].
//! - [`catalog`]: [`Catalog`], a snapshot implementing the validator's
//!   [`mcpflow_blueprint::ToolCatalog`].
//!
//! ```no_run
//! # async fn demo() -> mcpflow_mcp::Result<()> {
//! use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerConfigs};
//! let configs = ServerConfigs::read(std::path::Path::new("mcp.json"))?;
//! let mut approvals = Approvals::new();
//! approvals.approve_server(&configs, "inventory")?; // `--allow-server inventory`
//! let pool = Pool::new(configs, approvals, PoolOptions::default());
//! let catalog = pool.catalog().await; // starts what may start
//! pool.shutdown().await; // reaps every process
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

pub mod catalog;
pub mod consent;
pub mod error;
pub mod pool;

pub use catalog::{Catalog, CatalogServer};
pub use consent::{Approvals, CommandLine, Consent, Endpoint};
pub use error::{Error, Result};
/// The server configurations the pool is made from (crate `mcpflow-config`).
pub use mcpflow_config::{EnvLookup, InProcessConnect, Origin, ServerConfigs, ServerEntry};
pub use pool::{Discovery, LogStream, Pool, PoolOptions, STACK_META, ServerLog};
/// The rmcp version the pool speaks, for the types in [`Discovery`].
pub use rmcp;
