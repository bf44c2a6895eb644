//! What changed in the data folder, whoever changed it — the studio, an agent through
//! `mcpflow serve`, the CLI through the endpoint, a schedule — told to the window as the
//! typed event `StoreChanged` (`events.storeChanged` in `ui/src/bindings.ts`), so the
//! Open list, the open document and History follow without a manual refresh.

use mcpflow_app::Change;
use mcpflow_service::api::Api;
use serde::{Deserialize, Serialize};
use specta::Type;
use tauri_specta::Event;
use tokio::sync::broadcast::error::RecvError;

/// A change to the data folder (`what` says which).
#[derive(Debug, Clone, Serialize, Deserialize, Type, Event)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum StoreChanged {
    /// A blueprint was saved, deleted or imported: read the list (and the open one) again.
    Blueprints,
    /// The configured servers or their consents changed.
    Servers,
    /// A run started, from any front door; `get_run` and `follow_run` read and follow it.
    RunStarted {
        run_id: String,
        blueprint: String,
        /// `studio`, `cli`, `mcp` or `schedule`.
        trigger: String,
        /// The MCP client's name, for an `mcp` run.
        client: Option<String>,
    },
    /// The window fell behind and changes were lost: read everything again.
    Missed,
}

/// Forwards the data folder's changes to the window until the studio ends.
pub fn forward(handle: tauri::AppHandle, api: &Api) {
    let mut changes = api.subscribe_changes();
    tauri::async_runtime::spawn(async move {
        loop {
            let event = match changes.recv().await {
                Ok(Change::Blueprints) => StoreChanged::Blueprints,
                Ok(Change::Servers) => StoreChanged::Servers,
                Ok(Change::RunStarted { run_id, blueprint, trigger, client }) => {
                    StoreChanged::RunStarted { run_id, blueprint, trigger, client }
                }
                Err(RecvError::Lagged(_)) => StoreChanged::Missed,
                Err(RecvError::Closed) => return,
            };
            if let Err(error) = event.emit(&handle) {
                tracing::warn!(%error, "could not tell the window of a change to the data folder");
            }
        }
    });
}
