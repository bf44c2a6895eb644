//! System open/save dialogs, shown from Rust so the webview never names a path: the UI
//! asks for "import a blueprint", Rust shows the dialog and reads the file the user
//! picked. That is the only file access the studio offers.
//!
//! End-to-end tests cannot click through a GTK file chooser reliably, so when
//! `MCPFLOW_TEST_DIALOG_PATH` is set the dialogs are not shown and that path is the
//! user's pick. Nothing else changes: the same code reads and writes the file.

use std::path::PathBuf;
use tauri::AppHandle;
use tauri_plugin_dialog::DialogExt;
use tokio::sync::oneshot;

const TEST_PICK: &str = "MCPFLOW_TEST_DIALOG_PATH";

fn test_pick() -> Option<PathBuf> {
    std::env::var_os(TEST_PICK).filter(|p| !p.is_empty()).map(PathBuf::from)
}

/// Asks for a JSON file to open; `None` when the user cancelled.
pub async fn pick_open(app: &AppHandle, title: &str) -> Option<PathBuf> {
    if let Some(path) = test_pick() {
        return Some(path);
    }
    let (tx, rx) = oneshot::channel();
    app.dialog().file().set_title(title).add_filter("JSON", &["json"]).pick_file(move |picked| {
        let _ = tx.send(picked.and_then(|p| p.into_path().ok()));
    });
    rx.await.ok().flatten()
}

/// Asks where to save a JSON file; `None` when the user cancelled.
pub async fn pick_save(app: &AppHandle, title: &str, file_name: &str) -> Option<PathBuf> {
    if let Some(path) = test_pick() {
        return Some(path);
    }
    let (tx, rx) = oneshot::channel();
    app.dialog().file().set_title(title).add_filter("JSON", &["json"]).set_file_name(file_name).save_file(
        move |picked| {
            let _ = tx.send(picked.and_then(|p| p.into_path().ok()));
        },
    );
    rx.await.ok().flatten()
}
