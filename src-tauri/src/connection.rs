//! Where the studio's use cases are answered, told to the window: by the `mcpflow
//! service` holding the data folder (its pid), being reconnected to after it went away
//! (what happened), or in this process (a fallback when no service can be started). The
//! typed event `ServiceStatus` (`events.serviceStatus` in `ui/src/bindings.ts`) follows
//! the connection; `service_status` reads it at start.

use crate::commands::Studio;
use crate::dto::CommandError;
use mcpflow_service::api::Api;
use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::State;
use tauri_specta::Event;

/// The studio's connection to its engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, Event)]
pub struct ServiceStatus {
    pub state: ServiceState,
    /// The service's process id, when connected.
    pub pid: Option<u32>,
    /// What happened, while reconnecting.
    pub message: Option<String>,
    /// The address of the team's service (`MCPFLOW_SERVICE`), when it is one.
    pub team: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ServiceState {
    /// The service answers (shared with the MCP hosts' `mcpflow serve` and the CLI).
    Connected,
    /// The service went away; one is being started again and reconnected to.
    Reconnecting,
    /// This studio holds the store itself (no service could be started).
    InProcess,
}

/// The status of `api` now.
pub fn status_of(api: &Api) -> ServiceStatus {
    match api {
        Api::Local(_) => ServiceStatus { state: ServiceState::InProcess, pid: None, message: None, team: None },
        Api::Remote(remote) => from_remote(&remote.status().borrow(), remote.team().as_deref()),
    }
}

fn from_remote(status: &mcpflow_service::api::Status, team: Option<&str>) -> ServiceStatus {
    use mcpflow_service::api::Status;
    let team = team.map(str::to_owned);
    match status {
        Status::Connected { pid } => {
            ServiceStatus { state: ServiceState::Connected, pid: Some(*pid), message: None, team }
        }
        Status::Reconnecting { message } => {
            ServiceStatus { state: ServiceState::Reconnecting, pid: None, message: Some(message.clone()), team }
        }
    }
}

/// Tells the window each change of the connection, until the studio ends.
pub fn forward(handle: tauri::AppHandle, api: &Api) {
    if let Api::Remote(remote) = api {
        let mut status = remote.status();
        let team = remote.team();
        tauri::async_runtime::spawn(async move {
            while status.changed().await.is_ok() {
                let now = from_remote(&status.borrow_and_update(), team.as_deref());
                if let Some(pid) = now.pid {
                    tracing::info!(pid, "connected to the mcpflow service");
                } else {
                    tracing::warn!(message = now.message.as_deref().unwrap_or(""), "the mcpflow service went away");
                }
                if let Err(error) = now.emit(&handle) {
                    tracing::warn!(%error, "could not tell the window of the service connection");
                }
            }
        });
    }
}

/// Where the studio's use cases are answered now.
#[tauri::command]
#[specta::specta]
pub async fn service_status(studio: State<'_, Studio>) -> Result<ServiceStatus, CommandError> {
    Ok(status_of(&studio.api))
}
