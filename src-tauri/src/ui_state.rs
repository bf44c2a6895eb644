//! The studio's UI state: panel sizes, which panels are collapsed, whether the
//! first-start guide was dismissed. A small JSON object kept in the data folder
//! (`ui-state.json`), so it belongs to that folder (a fresh `MCPFLOW_HOME` starts with
//! the defaults and the guide) and not to the webview's storage, which every data
//! folder shares. The UI owns the object's shape; the shell only checks that it is an
//! object of at most [`MAX_BYTES`] and writes it atomically, readable by the user only.

use crate::commands::Studio;
use crate::dto::{CommandError, Json};
use serde::Serialize;
use serde_json::Value;
use specta::Type;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tauri::State;

/// The largest UI state accepted (serialized JSON).
pub const MAX_BYTES: usize = 64 * 1024;
const FILE: &str = "ui-state.json";
/// Set (to anything but `0`) by the end-to-end harness: the first-start guide stays
/// closed, so it does not cover what other tests click.
const NO_GUIDE_VAR: &str = "MCPFLOW_TEST_NO_GUIDE";

/// One write at a time (two quick writes must not interleave on the temporary file).
static WRITING: Mutex<()> = Mutex::new(());

/// What the UI gets back at start.
#[derive(Debug, Clone, Serialize, Type)]
pub struct UiState {
    /// The object last stored, or `{}` (none yet, or unreadable: the defaults apply).
    pub state: Json,
    /// The first-start guide must not open by itself (the test harness asks so).
    pub guide_off: bool,
}

fn path(studio: &Studio) -> PathBuf {
    Path::new(&studio.info.home).join(FILE)
}

/// The stored object, or `{}` when there is none or it is not a JSON object.
pub fn read(file: &Path) -> Value {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Value::Object(serde_json::Map::new());
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(v @ Value::Object(_)) if text.len() <= MAX_BYTES => v,
        _ => {
            tracing::warn!(file = %file.display(), "the UI state is not a JSON object of at most 64 KiB; using the defaults");
            Value::Object(serde_json::Map::new())
        }
    }
}

/// Checks and writes the object (temporary file, then rename; mode 0600 on Unix).
pub fn write(file: &Path, state: &Value) -> Result<(), CommandError> {
    if !state.is_object() {
        return Err(CommandError::new("BAD_REQUEST", "the UI state must be a JSON object"));
    }
    let text = serde_json::to_string(state)
        .map_err(|e| CommandError::new("BAD_REQUEST", format!("the UI state is not JSON: {e}")))?;
    if text.len() > MAX_BYTES {
        return Err(CommandError::new(
            "BAD_REQUEST",
            format!("the UI state is {} bytes; at most {MAX_BYTES} are kept", text.len()),
        ));
    }
    let failed = |e: std::io::Error| {
        CommandError::new(
            "FILE_ERROR",
            format!("could not remember the layout in {}: {e}; check that the data folder is writable", file.display()),
        )
    };
    let _one = WRITING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let tmp = file.with_extension("json.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    {
        use std::io::Write;
        let mut out = options.open(&tmp).map_err(failed)?;
        out.write_all(text.as_bytes()).map_err(failed)?;
        out.sync_all().map_err(failed)?;
    }
    std::fs::rename(&tmp, file).map_err(failed)
}

fn guide_off() -> bool {
    std::env::var_os(NO_GUIDE_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The UI state stored in the data folder (`{}` at first).
#[tauri::command]
#[specta::specta]
pub async fn get_ui_state(studio: State<'_, Studio>) -> Result<UiState, CommandError> {
    Ok(UiState { state: Json(read(&path(&studio))), guide_off: guide_off() })
}

/// Replaces the UI state (a JSON object of at most 64 KiB).
#[tauri::command]
#[specta::specta]
pub async fn set_ui_state(studio: State<'_, Studio>, state: Json) -> Result<(), CommandError> {
    write(&path(&studio), &state.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_size_limit_and_bad_files() {
        let dir = std::env::temp_dir().join(format!("mcpflow-ui-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(FILE);
        assert_eq!(read(&file), json!({}), "no file: the defaults");
        write(&file, &json!({ "left": { "size": 200, "collapsed": true } })).unwrap();
        assert_eq!(read(&file), json!({ "left": { "size": 200, "collapsed": true } }));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let big = json!({ "x": "a".repeat(MAX_BYTES) });
        assert_eq!(write(&file, &big).unwrap_err().code, "BAD_REQUEST");
        assert_eq!(write(&file, &json!([1])).unwrap_err().code, "BAD_REQUEST");
        assert_eq!(
            read(&file),
            json!({ "left": { "size": 200, "collapsed": true } }),
            "a refused write keeps the old state"
        );
        std::fs::write(&file, "[1, 2]").unwrap();
        assert_eq!(read(&file), json!({}), "not an object: the defaults");
        std::fs::write(&file, "{ broken").unwrap();
        assert_eq!(read(&file), json!({}), "not JSON: the defaults");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
