//! The OS keyring behind the token vault: on Linux the freedesktop Secret Service over
//! the D-Bus session bus (zbus, pure Rust; the secrets cross the bus encrypted), one item
//! per login in the default collection — attributes `service` = `mcpflow`,
//! `data_folder` = the data folder, `resource` = the canonical resource URL — its secret
//! the login's JSON. Elsewhere there is none yet: the vault keeps the file.
//!
//! Every call runs on a thread of its own, with its own runtime and a deadline: a keyring
//! that does not answer (a bus that hangs, an unlock prompt nobody answers) costs that
//! deadline, never a worker of the caller's runtime. A locked collection is reported as
//! such, never unlocked here: mcpflow shows no prompts of its own.

use std::path::Path;
use std::time::Duration;

/// How long the first look at the keyring may take before the vault keeps the file.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// How long one read, write or removal may take.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// The most items of one data folder read at once; more is refused, not read.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) const MAX_ITEMS: usize = 1000;

/// What the keyring is called in messages and `mcpflow auth status`.
pub const KEYRING_NAME: &str = "OS keyring (Secret Service)";

/// The `service` attribute of every item mcpflow writes.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const SERVICE: &str = "mcpflow";

/// The keyring items of one data folder.
#[derive(Debug, Clone)]
pub(crate) struct Keyring {
    folder: String,
}

impl Keyring {
    pub(crate) fn new(data_dir: &Path) -> Keyring {
        Keyring { folder: data_dir.to_string_lossy().into_owned() }
    }

    /// `Ok` when the Secret Service answers within [`PROBE_TIMEOUT`] and its default
    /// collection is unlocked; else why not.
    pub(crate) fn probe(&self) -> Result<(), String> {
        self.call(Op::Probe, PROBE_TIMEOUT).map(|_| ())
    }

    /// The secret stored for `resource`, if any (at most `max_bytes`).
    pub(crate) fn get(&self, resource: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, String> {
        match self.call(Op::Get { resource: resource.to_owned(), max_bytes }, CALL_TIMEOUT)? {
            Reply::Secrets(mut secrets) => Ok(secrets.pop()),
            Reply::Done(_) => Ok(None),
        }
    }

    /// Every secret of this data folder (each at most `max_bytes`).
    pub(crate) fn list(&self, max_bytes: u64) -> Result<Vec<Vec<u8>>, String> {
        match self.call(Op::List { max_bytes }, CALL_TIMEOUT)? {
            Reply::Secrets(secrets) => Ok(secrets),
            Reply::Done(_) => Ok(Vec::new()),
        }
    }

    /// Stores `secret` for `resource`, replacing what was there.
    pub(crate) fn put(&self, resource: &str, label: &str, secret: Vec<u8>) -> Result<(), String> {
        self.call(Op::Put { resource: resource.to_owned(), label: label.to_owned(), secret }, CALL_TIMEOUT).map(|_| ())
    }

    /// Deletes the item of `resource`; whether there was one.
    pub(crate) fn remove(&self, resource: &str) -> Result<bool, String> {
        match self.call(Op::Remove { resource: resource.to_owned() }, CALL_TIMEOUT)? {
            Reply::Done(had) => Ok(had),
            Reply::Secrets(_) => Ok(false),
        }
    }

    /// Runs `op` on a thread of its own within `timeout`.
    fn call(&self, op: Op, timeout: Duration) -> Result<Reply, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let folder = self.folder.clone();
        std::thread::Builder::new()
            .name("mcpflow-keyring".into())
            .spawn(move || {
                let result = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(runtime) => {
                        let result = runtime.block_on(async {
                            tokio::time::timeout(timeout, imp::perform(&folder, op))
                                .await
                                .unwrap_or_else(|_| Err(did_not_answer(timeout)))
                        });
                        runtime.shutdown_background();
                        result
                    }
                    Err(e) => Err(format!("cannot be reached: no runtime for it ({e})")),
                };
                let _ = tx.send(result);
            })
            .map_err(|e| format!("cannot be reached: no thread for it ({e})"))?;
        // The thread keeps its own deadline; this one only guards against it not starting.
        rx.recv_timeout(timeout + Duration::from_secs(1)).unwrap_or_else(|_| Err(did_not_answer(timeout)))
    }
}

fn did_not_answer(timeout: Duration) -> String {
    format!("did not answer within {} ms", timeout.as_millis())
}

enum Op {
    Probe,
    Get { resource: String, max_bytes: u64 },
    List { max_bytes: u64 },
    Put { resource: String, label: String, secret: Vec<u8> },
    Remove { resource: String },
}

enum Reply {
    Secrets(Vec<Vec<u8>>),
    Done(bool),
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{MAX_ITEMS, Op, Reply, SERVICE};
    use secret_service::{EncryptionType, Error as SsError, SecretService};
    use std::collections::HashMap;

    /// Connects, finds the default collection unlocked, and does `op` there.
    pub(super) async fn perform(folder: &str, op: Op) -> Result<Reply, String> {
        let service = SecretService::connect(EncryptionType::Dh).await.map_err(|e| match e {
            SsError::Unavailable => words(&e),
            // No bus at that address, or nothing answering on it: absent all the same.
            e => format!("{} ({e})", words(&SsError::Unavailable)),
        })?;
        let collection = service.get_default_collection().await.map_err(|e| match e {
            SsError::NoResult => "has no default collection: create one (e.g. in Passwords and Keys)".to_owned(),
            e => words(&e),
        })?;
        if collection.is_locked().await.map_err(|e| words(&e))? {
            return Err(words(&SsError::Locked));
        }
        let mut attributes = HashMap::from([("service", SERVICE), ("data_folder", folder)]);
        match op {
            Op::Probe => Ok(Reply::Done(true)),
            Op::Get { resource, max_bytes } => {
                attributes.insert("resource", &resource);
                let items = collection.search_items(attributes).await.map_err(|e| words(&e))?;
                let Some(item) = items.first() else { return Ok(Reply::Secrets(Vec::new())) };
                let secret = item.get_secret().await.map_err(|e| words(&e))?;
                Ok(Reply::Secrets(vec![bounded(secret, max_bytes)?]))
            }
            Op::List { max_bytes } => {
                let items = collection.search_items(attributes).await.map_err(|e| words(&e))?;
                if items.len() > MAX_ITEMS {
                    return Err(format!(
                        "holds {} mcpflow items for this data folder, more than {MAX_ITEMS}: remove some \
                         (e.g. `secret-tool clear service mcpflow`) and sign in again",
                        items.len()
                    ));
                }
                let mut secrets = Vec::with_capacity(items.len());
                for item in &items {
                    secrets.push(bounded(item.get_secret().await.map_err(|e| words(&e))?, max_bytes)?);
                }
                Ok(Reply::Secrets(secrets))
            }
            Op::Put { resource, label, secret } => {
                attributes.insert("resource", &resource);
                collection
                    .create_item(&label, attributes, &secret, true, "application/json")
                    .await
                    .map_err(|e| words(&e))?;
                Ok(Reply::Done(true))
            }
            Op::Remove { resource } => {
                attributes.insert("resource", &resource);
                let items = collection.search_items(attributes).await.map_err(|e| words(&e))?;
                for item in &items {
                    item.delete().await.map_err(|e| words(&e))?;
                }
                Ok(Reply::Done(!items.is_empty()))
            }
        }
    }

    fn bounded(secret: Vec<u8>, max_bytes: u64) -> Result<Vec<u8>, String> {
        if secret.len() as u64 > max_bytes {
            return Err(format!(
                "holds an mcpflow item larger than {} KiB: remove it (e.g. `secret-tool clear service mcpflow`) and \
                 sign in again",
                max_bytes / 1024
            ));
        }
        Ok(secret)
    }

    /// The Secret Service's failure in words, with what to do.
    fn words(error: &SsError) -> String {
        match error {
            SsError::Unavailable => {
                "is not running: no D-Bus session bus, or no Secret Service on it (e.g. gnome-keyring-daemon)"
                    .to_owned()
            }
            SsError::Locked => {
                "is locked: unlock it (sign in to the desktop session, or open Passwords and Keys), then try again"
                    .to_owned()
            }
            SsError::Prompt | SsError::PromptDisconnected => {
                "asked for a confirmation that was not given: unlock the keyring, then try again".to_owned()
            }
            e => format!("failed: {e}"),
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Op, Reply};

    pub(super) async fn perform(_folder: &str, _op: Op) -> Result<Reply, String> {
        Err("is not supported on this system yet: mcpflow keeps tokens in the data folder's file".to_owned())
    }
}
