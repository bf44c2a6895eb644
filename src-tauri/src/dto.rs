//! What crosses the IPC boundary: the studio's client interface's types
//! (`mcpflow_service::api::dto`), which derive `specta::Type` for `ui/src/bindings.ts` when
//! the app's `specta` feature is on (it is, for the studio).

pub use mcpflow_service::api::dto::*;
