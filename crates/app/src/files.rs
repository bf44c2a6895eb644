//! Writing a user's file whole: beside it first, then renamed over it, so a crash or a
//! full disk never leaves it half written.

use std::path::Path;

/// Replaces `file` with `text` (creating its folder): written beside it under a name of
/// this process, given the old file's permissions (it may hold secrets), then renamed
/// over it; the file beside is removed when the rename fails.
pub(crate) fn write_whole(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let beside = file.with_file_name(format!(".{name}.mcpflow-{}", std::process::id()));
    std::fs::write(&beside, text)?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&beside, meta.permissions());
    }
    std::fs::rename(&beside, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&beside);
    })
}
