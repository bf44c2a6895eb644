//! The token vault: where logins live. In the OS keyring where one is available (on
//! Linux the freedesktop Secret Service, see [`super::keyring`]), else in one user-only
//! JSON file, `auth/tokens.json` in the data folder (the folder 0700, the file 0600,
//! replaced atomically: written beside it, then renamed), read within [`MAX_VAULT_BYTES`].
//! Logins are keyed by the canonical resource URL, never by the server's name alone: a
//! server renamed or pointed elsewhere never receives another server's token.
//!
//! The store is chosen at first use: `MCPFLOW_TOKEN_STORE=file|keyring` forces one; else
//! the keyring when it answers within a second with its default collection unlocked, else
//! the file. Logins already in the file keep working (both are read; a login written goes
//! to the chosen store and leaves the file). Once the keyring held this data folder's
//! logins (`auth/keyring` records it), a keyring that is locked or gone is an
//! `AUTH_VAULT` error with what to do, never a silent switch to an empty file.

use super::keyring::{KEYRING_NAME, Keyring};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The largest vault file read (1 MiB); a larger one is refused, not read.
pub const MAX_VAULT_BYTES: u64 = 1024 * 1024;

/// One login: what signing in to one resource gave, and what refreshing it needs.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Login {
    /// The server's canonical URL (the key).
    pub resource: String,
    /// The `resource` the token was asked for, when the server's metadata names another
    /// than its URL (a prefix of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// The server's name when it signed in (for display only).
    pub server: String,
    /// `authorization_code` or `client_credentials`.
    pub grant: String,
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Unix milliseconds when the access token expires, when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<i64>,
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Scopes the server asked for beyond these (`403 insufficient_scope`): the next
    /// sign-in asks for them too (the step-up).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_up: Vec<String>,
    /// Who signed in, when the token answer says (`sub`, `account`, a username).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The client that holds the login (registered, configured or a metadata URL).
    pub client_id: String,
    /// A secret the authorization server issued at registration (never a configured one:
    /// that stays in the environment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates to the token endpoint (`client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt`, `none`); absent in logins kept before it
    /// was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_auth_method: Option<String>,
    /// The authorization server's token endpoint and issuer, for refreshing.
    pub token_endpoint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Unix milliseconds of the sign-in or last refresh.
    pub updated_ms: i64,
}

/// Never prints a token or secret.
impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("resource", &self.resource)
            .field("server", &self.server)
            .field("grant", &self.grant)
            .field("expires_at_ms", &self.expires_at_ms)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

#[derive(Default, Serialize, Deserialize)]
struct File {
    version: u32,
    logins: BTreeMap<String, Login>,
}

/// Where a vault keeps the logins it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenStore {
    /// The OS keyring (the Secret Service on Linux).
    Keyring,
    /// `auth/tokens.json` in the data folder, user-only.
    File,
}

/// The environment variable that forces a store: `file` or `keyring`.
pub const TOKEN_STORE_ENV: &str = "MCPFLOW_TOKEN_STORE";

/// The vault of one data folder. Every operation reads its store again: several
/// processes (the studio, the daemon, `mcpflow run`) share it, and the last writer of a
/// login wins.
#[derive(Debug, Clone)]
pub struct Vault {
    path: PathBuf,
    keyring: Keyring,
    /// Forced by the caller, else chosen at first use (see the module's text).
    forced: Option<TokenStore>,
    chosen: Arc<OnceLock<TokenStore>>,
}

impl Vault {
    /// The vault of data folder `data_dir`: the OS keyring where one is available, else
    /// `data_dir/auth/tokens.json` (see the module's text).
    pub fn in_data_dir(data_dir: &Path) -> Vault {
        Vault {
            path: data_dir.join("auth").join("tokens.json"),
            keyring: Keyring::new(data_dir),
            forced: None,
            chosen: Arc::new(OnceLock::new()),
        }
    }

    /// The vault of `data_dir` in `store`, whatever the environment says.
    pub fn in_data_dir_with(data_dir: &Path, store: TokenStore) -> Vault {
        Vault { forced: Some(store), ..Vault::in_data_dir(data_dir) }
    }

    /// The file (`auth/tokens.json`), used when the keyring is not.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where this vault keeps the logins it writes (choosing it at first use).
    pub fn store(&self) -> Result<TokenStore> {
        if let Some(store) = self.forced.or_else(|| self.chosen.get().copied()) {
            return Ok(store);
        }
        let store = self.choose()?;
        Ok(*self.chosen.get_or_init(|| store))
    }

    /// `OS keyring (Secret Service)`, or `file PATH (user-only)`.
    pub fn describe_store(&self) -> Result<String> {
        Ok(match self.store()? {
            TokenStore::Keyring => KEYRING_NAME.to_owned(),
            TokenStore::File => format!("file {} (user-only)", self.path.display()),
        })
    }

    /// Records that this data folder's logins went to the keyring.
    fn marker(&self) -> PathBuf {
        self.path.with_file_name("keyring")
    }

    fn choose(&self) -> Result<TokenStore> {
        let wanted = std::env::var(TOKEN_STORE_ENV).unwrap_or_default();
        match wanted.trim() {
            "file" => Ok(TokenStore::File),
            "keyring" => match self.keyring.probe() {
                Ok(()) => Ok(TokenStore::Keyring),
                Err(why) => Err(self.keyring_error(format!(
                    "{why} ({TOKEN_STORE_ENV}=keyring asks for it; unset it or set it to `file` to keep tokens in {})",
                    self.path.display()
                ))),
            },
            "" | "auto" => match self.keyring.probe() {
                Ok(()) => Ok(TokenStore::Keyring),
                Err(why) if self.marker().exists() => Err(self.keyring_error(format!(
                    "{why}. It holds this data folder's logins ({} says so): once it is back they work again; or \
                     set {TOKEN_STORE_ENV}=file to sign in again with tokens in {} (delete {} to make that the \
                     default)",
                    self.marker().display(),
                    self.path.display(),
                    self.marker().display()
                ))),
                Err(why) => {
                    tracing::debug!(%why, "no OS keyring; tokens stay in the data folder's file");
                    Ok(TokenStore::File)
                }
            },
            other => Err(self.error(format!(
                "{TOKEN_STORE_ENV} is `{other}`: set it to `file` or `keyring`, or unset it to use the OS keyring where \
                 one is available"
            ))),
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::AuthVault { path: self.path.clone(), message: message.to_string() }
    }

    fn keyring_error(&self, message: impl std::fmt::Display) -> Error {
        Error::AuthVault { path: PathBuf::from(KEYRING_NAME), message: message.to_string() }
    }

    /// The keyring's login for `resource`, if the keyring is the store and holds one.
    fn keyring_login(&self, resource: &str) -> Result<Option<Login>> {
        let secret = self.keyring.get(resource, MAX_VAULT_BYTES).map_err(|m| self.keyring_error(m))?;
        secret.map(|bytes| self.parse_item(&bytes)).transpose()
    }

    fn parse_item(&self, bytes: &[u8]) -> Result<Login> {
        serde_json::from_slice(bytes).map_err(|e| {
            self.keyring_error(format!(
                "holds an mcpflow item that is not a login mcpflow wrote ({e}): remove it (e.g. `secret-tool clear \
                 service mcpflow`) and sign in again"
            ))
        })
    }

    fn read(&self) -> Result<File> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(File { version: 1, ..File::default() }),
            Err(e) => return Err(self.error(format!("cannot be read: {e}"))),
        };
        let mut bytes = Vec::new();
        file.take(MAX_VAULT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.error(format!("cannot be read: {e}")))?;
        if bytes.len() as u64 > MAX_VAULT_BYTES {
            return Err(
                self.error(format!("is larger than {} KiB; delete it and sign in again", MAX_VAULT_BYTES / 1024))
            );
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| self.error(format!("is not a vault mcpflow wrote ({e}); delete it and sign in again")))
    }

    fn write(&self, file: &File) -> Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir).map_err(|e| self.error(format!("its folder cannot be created: {e}")))?;
        let bytes = serde_json::to_vec_pretty(file).map_err(|e| self.error(e))?;
        let tmp = dir.join(format!(".tokens.{}.{}.tmp", std::process::id(), unique()));
        let written = (|| {
            let mut out = private_file(&tmp)?;
            out.write_all(&bytes)?;
            out.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(self.error(format!("cannot be written: {e}")));
        }
        Ok(())
    }

    /// Removes `resource` from the file; whether it was there.
    fn remove_from_file(&self, resource: &str) -> Result<bool> {
        let mut file = self.read()?;
        let had = file.logins.remove(resource).is_some();
        if had {
            self.write(&file)?;
        }
        Ok(had)
    }

    /// The login for resource `resource`, if any.
    pub fn get(&self, resource: &str) -> Result<Option<Login>> {
        if self.store()? == TokenStore::Keyring
            && let Some(login) = self.keyring_login(resource)?
        {
            return Ok(Some(login));
        }
        Ok(self.read()?.logins.remove(resource))
    }

    /// Every login, by resource.
    pub fn list(&self) -> Result<Vec<Login>> {
        let mut logins = self.read()?.logins;
        if self.store()? == TokenStore::Keyring {
            for bytes in self.keyring.list(MAX_VAULT_BYTES).map_err(|m| self.keyring_error(m))? {
                let login = self.parse_item(&bytes)?;
                logins.insert(login.resource.clone(), login);
            }
        }
        Ok(logins.into_values().collect())
    }

    /// Stores `login` under its resource, replacing what was there.
    pub fn put(&self, login: Login) -> Result<()> {
        match self.store()? {
            TokenStore::File => {
                let mut file = self.read()?;
                file.version = 1;
                file.logins.insert(login.resource.clone(), login);
                self.write(&file)
            }
            TokenStore::Keyring => {
                let marker = self.marker();
                if !marker.exists() {
                    let dir = self.path.parent().unwrap_or(Path::new("."));
                    create_private_dir(dir).map_err(|e| self.error(format!("its folder cannot be created: {e}")))?;
                    std::fs::write(
                        &marker,
                        "The sign-ins of this data folder are in the OS keyring (service `mcpflow`).\n",
                    )
                    .map_err(|e| self.error(format!("{} cannot be written: {e}", marker.display())))?;
                }
                let secret = serde_json::to_vec(&login).map_err(|e| self.keyring_error(e))?;
                let label = format!("mcpflow sign-in: {}", login.resource);
                self.keyring.put(&login.resource, &label, secret).map_err(|m| self.keyring_error(m))?;
                // The login written replaces an older one in the file.
                self.remove_from_file(&login.resource)?;
                Ok(())
            }
        }
    }

    /// Forgets the login for `resource`; whether there was one.
    pub fn remove(&self, resource: &str) -> Result<bool> {
        let in_keyring = match self.store()? {
            TokenStore::Keyring => self.keyring.remove(resource).map_err(|m| self.keyring_error(m))?,
            TokenStore::File => false,
        };
        Ok(self.remove_from_file(resource)? || in_keyring)
    }
}

fn unique() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default()
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    // An existing folder keeps whatever mode it had: make it the user's alone.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).create_new(true).open(path)
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(resource: &str) -> Login {
        Login {
            resource: resource.into(),
            audience: None,
            server: "s".into(),
            grant: "authorization_code".into(),
            access_token: "AT-secret".into(),
            refresh_token: Some("RT-secret".into()),
            expires_at_ms: Some(1),
            scopes: vec!["mcp:tools".into()],
            step_up: Vec::new(),
            account: None,
            client_id: "c".into(),
            client_secret: None,
            token_auth_method: None,
            token_endpoint: "http://127.0.0.1:1/token".into(),
            issuer: None,
            updated_ms: 0,
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_vault_is_the_users_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("auth")).unwrap();
        std::fs::set_permissions(dir.path().join("auth"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let vault = Vault::in_data_dir_with(dir.path(), TokenStore::File);
        vault.put(login("http://a/mcp")).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(vault.path()), 0o600);
        assert_eq!(mode(&dir.path().join("auth")), 0o700);
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(dir.path().join("auth")).unwrap().count(), 1);
        assert!(!format!("{:?}", vault.get("http://a/mcp").unwrap()).contains("secret"));
    }

    #[test]
    fn keyed_by_resource_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::in_data_dir_with(dir.path(), TokenStore::File);
        vault.put(login("http://a/mcp")).unwrap();
        assert!(vault.get("http://b/mcp").unwrap().is_none());
        assert_eq!(vault.get("http://a/mcp").unwrap().unwrap().access_token, "AT-secret");
        assert!(vault.remove("http://a/mcp").unwrap());
        assert!(!vault.remove("http://a/mcp").unwrap());
        std::fs::write(vault.path(), vec![b' '; (MAX_VAULT_BYTES + 10) as usize]).unwrap();
        assert_eq!(vault.list().unwrap_err().code(), "AUTH_VAULT");
    }
}
