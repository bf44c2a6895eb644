//! More scope when a server asks for it (`403 insufficient_scope`), through the pool:
//! a call refused for want of a scope signs in again (when allowed) and is sent again.
//! Against the testkit's OAuth fixture; the browser is `curl` following redirects (the
//! sign-in itself is tested in `crates/auth/tests/it/flow.rs`).

use crate::support::{config, configs, tool};
use mcpflow_auth::{Authenticator, Browser, Error as AuthError, LoginRequest, SignIn, TokenStore, Vault};
use mcpflow_mcp::{Approvals, Error, Pool, PoolOptions};
use mcpflow_testkit::oauth::{OAuthOptions, OAuthServer};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A browser that follows the redirects.
fn curl() -> Browser {
    Browser::Command(["curl", "-s", "-L", "-o", "/dev/null"].map(str::to_owned).to_vec())
}

fn scopes(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// A fixture whose `tools/call` needs `files:write` beyond the `files:read` its
/// metadata lists, and an authenticator (its vault in `dir`) signed in for `files:read`.
async fn signed_in_for_read(withheld: &[&str], dir: &std::path::Path) -> (OAuthServer, Authenticator) {
    let fixture = OAuthServer::start(OAuthOptions {
        scopes_supported: scopes(&["files:read"]),
        tool_scope: Some("files:write".to_owned()),
        withheld_scopes: scopes(withheld),
        ..OAuthOptions::default()
    })
    .unwrap();
    let auth = Authenticator::new(Vault::in_data_dir_with(dir, TokenStore::File));
    let env: mcpflow_mcp::EnvLookup = Arc::new(|_: &str| None);
    let url = fixture.url();
    let request = LoginRequest {
        server: "guarded",
        url: &url,
        oauth: None,
        env: &env,
        timeout: Duration::from_secs(60),
        browser: &curl(),
    };
    let login = auth.login(request).await.unwrap();
    assert_eq!(login.scopes, ["files:read"]);
    (fixture, auth)
}

/// A pool whose authenticator may sign in again (`mcpflow run --sign-in`), and what
/// it told the person.
fn pool(fixture: &OAuthServer, auth: Authenticator, sign_in: bool) -> (Pool, Arc<Mutex<Vec<String>>>) {
    let told = Arc::new(Mutex::new(Vec::new()));
    let notes = told.clone();
    let auth = if sign_in {
        auth.with_sign_in(SignIn {
            browser: curl(),
            timeout: Duration::from_secs(60),
            notice: Arc::new(move |server, scope| notes.lock().unwrap().push(format!("{server}: {scope}"))),
        })
    } else {
        auth
    };
    let servers = configs(vec![("guarded", config(json!({ "url": fixture.url() })))]);
    let options = PoolOptions::default().with_auth(Arc::new(auth));
    (Pool::new(servers, Approvals::allow_all(), options), told)
}

#[tokio::test]
async fn a_call_refused_for_want_of_a_scope_signs_in_again_for_it_and_is_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, auth) = signed_in_for_read(&[], dir.path()).await;
    let (pool, told) = pool(&fixture, auth.clone(), true);
    let result = pool.call(tool(Some("guarded"), "echo", json!({ "x": 1 }))).await.unwrap();
    assert_eq!(result["structuredContent"], json!({ "x": 1 }));
    let asked: Vec<Vec<String>> = fixture.authorizations().into_iter().map(|a| a.scopes).collect();
    assert_eq!(asked, [scopes(&["files:read"]), scopes(&["files:read", "files:write"])]);
    assert_eq!(*told.lock().unwrap(), ["guarded: files:read files:write"]);
    let login = auth.login_for(&fixture.url()).unwrap().unwrap();
    assert_eq!(login.scopes, ["files:read", "files:write"]);
    pool.shutdown().await;
}

#[tokio::test]
async fn without_leave_to_sign_in_the_call_fails_with_auth_required_naming_the_scope() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, auth) = signed_in_for_read(&[], dir.path()).await;
    let (pool, told) = pool(&fixture, auth, false);
    let error = pool.call(tool(Some("guarded"), "echo", json!({}))).await.unwrap_err();
    assert!(
        matches!(&error, Error::Auth(AuthError::AuthRequired { scope: Some(scope), .. }) if scope.contains("files:write")),
        "{error:?}"
    );
    assert_eq!(fixture.authorizations().len(), 1);
    assert!(told.lock().unwrap().is_empty());
    pool.shutdown().await;
}

#[tokio::test]
async fn a_server_that_keeps_refusing_gets_at_most_two_sign_ins_more() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, auth) = signed_in_for_read(&["files:write"], dir.path()).await;
    let (pool, told) = pool(&fixture, auth, true);
    for _ in 0..4 {
        let error = pool.call(tool(Some("guarded"), "echo", json!({}))).await.unwrap_err();
        assert!(matches!(error, Error::Auth(AuthError::AuthRequired { .. })), "{error:?}");
    }
    assert_eq!(fixture.authorizations().len(), 1 + 2);
    assert_eq!(told.lock().unwrap().len(), 2);
    pool.shutdown().await;
}
