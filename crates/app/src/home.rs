//! Where mcpflow keeps its data: `MCPFLOW_HOME`, else the platform's data folder.

use std::path::PathBuf;

/// The data folder: `$MCPFLOW_HOME`, else e.g. `~/.local/share/mcpflow` on Linux.
pub fn data_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("MCPFLOW_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home);
    }
    dirs::data_dir().unwrap_or_else(std::env::temp_dir).join("mcpflow")
}

/// Where saved values live until the store keeps them.
pub fn saved_dir() -> PathBuf {
    data_dir().join("saved")
}
