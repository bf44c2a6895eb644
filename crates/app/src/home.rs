//! Where mcpflow keeps its data: `MCPFLOW_HOME`, else the platform's data folder — and
//! that it is the user's alone: created 0700 whatever the umask, and refused when another
//! user owns it or group or others can write to it (`DATA_FOLDER_NOT_PRIVATE`), since the
//! store, the approvals, the sign-ins and the service's socket live there.

use std::path::{Path, PathBuf};

/// The stable code of a data folder (or a service endpoint in it) that is not the user's alone.
pub const NOT_PRIVATE: &str = "DATA_FOLDER_NOT_PRIVATE";

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

/// A data folder that is not the user's alone, or could not be made: what, where, and
/// what to do, in the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct NotPrivate {
    /// [`NOT_PRIVATE`], or [`NOT_YOURS`] for a service endpoint answered by another user.
    pub code: &'static str,
    pub path: PathBuf,
    pub message: String,
}

/// The stable code of a service socket answered by another user's process.
pub const NOT_YOURS: &str = "SERVICE_NOT_YOURS";

impl NotPrivate {
    pub fn code(&self) -> &'static str {
        self.code
    }
}

/// Creates data folder `home` (and missing parents) with mode 0700, whatever the umask,
/// or checks the one there with [`check`].
pub fn prepare(home: &Path) -> Result<(), NotPrivate> {
    if std::fs::symlink_metadata(home).is_err() {
        create_private(home).map_err(|e| NotPrivate {
            code: NOT_PRIVATE,
            path: home.to_owned(),
            message: format!("cannot create the data folder {}: {e}", home.display()),
        })?;
    }
    check(home)
}

/// Creates `dir` (and missing parents) with mode 0700 on Unix, set after creation so the
/// umask has no say.
pub(crate) fn create_private(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// Refuses data folder `home` when another user owns it or group or others can write to
/// it (they could plant a socket or a store there, or replace what is in it). A folder
/// that is not there passes (nothing to refuse yet). Elsewhere than on Unix, nothing is
/// checked.
pub fn check(home: &Path) -> Result<(), NotPrivate> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let Ok(meta) = std::fs::metadata(home) else { return Ok(()) };
        if let Some(why) = unsafe_because(meta.uid(), meta.mode(), current_uid()) {
            return Err(NotPrivate {
                code: NOT_PRIVATE,
                path: home.to_owned(),
                message: format!(
                    "the data folder {} {why}; it holds the store, approvals, sign-ins and the service's socket, so \
                     it must be yours alone: run `chmod 700 {}` if it is yours, or set MCPFLOW_HOME to a folder of \
                     your own",
                    home.display(),
                    home.display()
                ),
            });
        }
    }
    #[cfg(not(unix))]
    let _ = home;
    Ok(())
}

/// Why a folder of owner `owner` and mode `mode` is not user `me`'s alone, if it is not.
pub(crate) fn unsafe_because(owner: u32, mode: u32, me: u32) -> Option<String> {
    if owner != me {
        return Some(format!("belongs to another user (uid {owner}, you are {me})"));
    }
    (mode & 0o022 != 0).then(|| format!("can be written by group or others (mode {:04o})", mode & 0o7777))
}

/// This process's user id.
#[cfg(unix)]
pub fn current_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_private_when_its_user_owns_it_and_only_they_write() {
        assert_eq!(unsafe_because(1000, 0o40700, 1000), None);
        assert_eq!(unsafe_because(1000, 0o40755, 1000), None, "readable by others is the user's choice");
        assert!(unsafe_because(1000, 0o40777, 1000).unwrap().contains("mode 0777"));
        assert!(unsafe_because(1000, 0o40720, 1000).unwrap().contains("group or others"));
        assert!(unsafe_because(1001, 0o40700, 1000).unwrap().contains("another user (uid 1001"));
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_made_here_is_0700_and_a_0777_one_is_refused_with_what_to_do() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("a/home");
        prepare(&home).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&home), mode(&dir.path().join("a"))), (0o700, 0o700));
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = prepare(&home).unwrap_err();
        assert_eq!(refused.code(), "DATA_FOLDER_NOT_PRIVATE");
        assert!(refused.message.contains(&format!("`chmod 700 {}`", home.display())), "{}", refused.message);
    }
}
