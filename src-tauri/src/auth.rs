//! Signing in to OAuth servers from the Servers panel: the logins each configured HTTP
//! server holds, a browser sign-in (the app opens the system browser and waits on its
//! loopback redirect), cancelling that wait, and signing out. The flow itself, the
//! token vault and refreshing are `mcpflow_app::auth`'s; this only runs it where the
//! panel can stop it.

use crate::commands::Studio;
use crate::dto::CommandError;
use mcpflow_app::auth::{AuthStatus, LoginOptions};
use serde::Serialize;
use specta::Type;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tauri::State;

type Result<T> = std::result::Result<T, CommandError>;

/// How long a sign-in waits for the browser before it gives up (`AUTH_TIMEOUT`).
const LOGIN_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The login one configured HTTP server holds. Never the token itself.
#[derive(Debug, Clone, Serialize, Type)]
pub struct AuthStatusDto {
    pub server: String,
    pub url: String,
    pub signed_in: bool,
    /// `authorization_code` or `client_credentials`.
    pub grant: Option<String>,
    /// Who the login is for, when the server said.
    pub account: Option<String>,
    pub scopes: Vec<String>,
    /// When the access token expires, in milliseconds since the Unix epoch (it is
    /// refreshed before then when `refreshable`).
    pub expires_at_ms: Option<f64>,
    pub refreshable: bool,
}

impl From<AuthStatus> for AuthStatusDto {
    fn from(s: AuthStatus) -> Self {
        AuthStatusDto {
            server: s.server,
            url: s.url,
            signed_in: s.signed_in,
            grant: s.grant,
            account: s.account,
            scopes: s.scopes,
            // Milliseconds since 1970 fit an f64 exactly until the year 287,396.
            #[allow(clippy::cast_precision_loss)]
            expires_at_ms: s.expires_at_ms.map(|ms| ms as f64),
            refreshable: s.refreshable,
        }
    }
}

/// The sign-ins waiting on the browser, by server, so Cancel can stop one.
#[derive(Debug, Default)]
pub struct Logins {
    next: std::sync::atomic::AtomicU64,
    waiting: Mutex<HashMap<String, (u64, tokio::task::AbortHandle)>>,
}

impl Logins {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, tokio::task::AbortHandle)>> {
        // A panic while holding this lock leaves only a map of abort handles behind.
        self.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Aborts every sign-in still waiting (the studio is closing).
    pub fn abort_all(&self) {
        for (_, (_, handle)) in self.lock().drain() {
            handle.abort();
        }
    }
}

/// The login of every configured HTTP server (signed in or not).
#[tauri::command]
#[specta::specta]
pub async fn auth_status(studio: State<'_, Studio>) -> Result<Vec<AuthStatusDto>> {
    Ok(studio.app.auth_status().await?.into_iter().map(AuthStatusDto::from).collect())
}

/// Signs in to `server` through the system browser and waits (up to five minutes) for
/// the redirect; returns the new login. A sign-in already waiting for the same server is
/// stopped first. `AUTH_CANCELLED` when `auth_cancel` stopped this one.
#[tauri::command]
#[specta::specta]
pub async fn auth_login(studio: State<'_, Studio>, server: String) -> Result<AuthStatusDto> {
    let app = studio.app.clone();
    let name = server.clone();
    let task = tokio::spawn(async move {
        let options = LoginOptions { timeout: LOGIN_TIMEOUT, ..LoginOptions::default() };
        app.auth_login(&name, options).await
    });
    let id = studio.logins.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Some((_, previous)) = studio.logins.lock().insert(server.clone(), (id, task.abort_handle())) {
        previous.abort();
    }
    let result = task.await;
    {
        let mut waiting = studio.logins.lock();
        if waiting.get(&server).is_some_and(|(at, _)| *at == id) {
            waiting.remove(&server);
        }
    }
    match result {
        Ok(found) => Ok(found?.into()),
        Err(e) if e.is_cancelled() => Err(CommandError::new(
            "AUTH_CANCELLED",
            format!("signing in to `{server}` was cancelled; press Sign in to start again"),
        )),
        Err(e) => Err(CommandError::new(
            "AUTH_FAILED",
            format!("signing in to `{server}` stopped unexpectedly ({e}); press Sign in to try again"),
        )),
    }
}

/// Stops waiting for the browser sign-in to `server` (its loopback listener closes, so a
/// late redirect finds nobody). True when one was waiting.
#[tauri::command]
#[specta::specta]
pub async fn auth_cancel(studio: State<'_, Studio>, server: String) -> Result<bool> {
    let found = studio.logins.lock().remove(&server);
    Ok(found.map(|(_, handle)| handle.abort()).is_some())
}

/// Forgets the login `server` holds (its tokens leave the vault).
#[tauri::command]
#[specta::specta]
pub async fn auth_logout(studio: State<'_, Studio>, server: String) -> Result<()> {
    Ok(studio.app.auth_logout(&server).await?)
}
