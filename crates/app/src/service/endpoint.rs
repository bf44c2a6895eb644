//! The service's socket: bound with mode 0600 by the store's owner, found by the others.

use super::socket_path;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use tokio::net::{UnixListener, UnixStream};

/// The bound socket; its file is removed when dropped.
#[derive(Debug)]
pub struct Listener {
    inner: UnixListener,
    path: PathBuf,
}

impl Listener {
    pub async fn accept(&self) -> std::io::Result<(UnixStream, tokio::net::unix::SocketAddr)> {
        self.inner.accept().await
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Binds the endpoint of data folder `home`. Call only while holding its store (the lock
/// says no other process may bind it): a socket file there that still answers is another
/// process's, an error; one that does not is a dead process's leftover, replaced.
pub fn bind(home: &Path) -> std::io::Result<Listener> {
    let path = socket_path(home);
    if std::fs::symlink_metadata(&path).is_ok() {
        if std::os::unix::net::UnixStream::connect(&path).is_ok() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!("another mcpflow process answers at {}; stop it first", path.display()),
            ));
        }
        std::fs::remove_file(&path)?;
    }
    // Made under another name and given its mode before it takes the real name, so it
    // is never reachable with wider permissions.
    let staging = home.join(format!(".{}.{}", super::SOCKET_FILE, std::process::id()));
    let _ = std::fs::remove_file(&staging);
    let inner = UnixListener::bind(&staging)?;
    std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))?;
    std::fs::rename(&staging, &path)?;
    Ok(Listener { inner, path })
}

/// A connection to the endpoint of data folder `home`; `None` when nothing answers there.
pub async fn connect(home: &Path) -> Option<UnixStream> {
    let path = socket_path(home);
    if !path.exists() {
        return None;
    }
    UnixStream::connect(&path).await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_socket_is_for_its_user_only_and_a_leftover_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let listener = bind(dir.path()).unwrap();
        let mode = std::fs::metadata(listener.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A second bind while the first answers is refused.
        let err = bind(dir.path()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
        assert!(connect(dir.path()).await.is_some());
        let path = listener.path().to_owned();
        drop(listener);
        assert!(!path.exists(), "the socket file goes with its listener");
        // A socket file nobody answers on (its process died) is replaced.
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert!(path.exists() && connect(dir.path()).await.is_none());
        let again = bind(dir.path()).unwrap();
        assert!(connect(dir.path()).await.is_some());
        drop(again);
        assert!(connect(dir.path()).await.is_none());
    }
}
