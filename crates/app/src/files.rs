//! Writing a user's file whole: beside it first, then renamed over it, so a crash or a
//! full disk never leaves it half written.

use std::path::{Path, PathBuf};

/// Replaces `file` with `text` (creating its folder): written beside it under a name of
/// this process, given the old file's permissions (it may hold secrets), then renamed
/// over it; the file beside is removed when the rename fails.
pub fn write_whole(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let beside = beside(file);
    std::fs::write(&beside, text)?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&beside, meta.permissions());
    }
    rename_over(&beside, file)
}

/// Replaces `file` with `text`, readable by its user alone: the file beside is created
/// new with mode 0600 (on Unix; elsewhere it takes the folder's access rules), so what
/// it holds is never readable by others, not even for a moment; then renamed over it.
pub fn write_private(file: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let beside = beside(file);
    // A leftover of an earlier process with this id.
    let _ = std::fs::remove_file(&beside);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&beside).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&beside);
        return Err(e);
    }
    rename_over(&beside, file)
}

/// The name `file` is written under first: beside it, of this process.
fn beside(file: &Path) -> PathBuf {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    file.with_file_name(format!(".{name}.mcpflow-{}", std::process::id()))
}

fn rename_over(beside: &Path, file: &Path) -> std::io::Result<()> {
    std::fs::rename(beside, file).inspect_err(|_| {
        let _ = std::fs::remove_file(beside);
    })
}
