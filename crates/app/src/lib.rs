//! The use cases every front door shares. The CLI and the desktop shell decode their
//! input, call one function here, and present the result.
//!
//! - [`headless`]: run one blueprint file with servers from `mcpServers` files
//!   (`mcpflow run`).

pub mod headless;
pub mod home;
