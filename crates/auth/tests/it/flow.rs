//! Signing in against the testkit's OAuth fixture (`mcpflow_testkit::oauth`): an
//! authorization server and a protected MCP server on loopback. The browser is `curl`
//! following redirects: the fixture's `/authorize` approves at once and sends it to the
//! loopback listener of the sign-in.

use mcpflow_auth::{Authenticator, Browser, Login, LoginRequest, TokenStore, Vault};
use mcpflow_blueprint::OAuthConfig;
use mcpflow_config::EnvLookup;
use mcpflow_testkit::oauth::{Era, OAuthOptions, OAuthServer, TokenRequest};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

pub struct Signing {
    _dir: tempfile::TempDir,
    pub auth: Authenticator,
}

impl Signing {
    pub fn new() -> Signing {
        let dir = tempfile::tempdir().unwrap();
        let auth = Authenticator::new(Vault::in_data_dir_with(dir.path(), TokenStore::File));
        Signing { _dir: dir, auth }
    }

    pub async fn login(
        &self,
        fixture: &OAuthServer,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
    ) -> mcpflow_auth::Result<Login> {
        let url = fixture.url();
        self.auth
            .login(LoginRequest {
                server: "guarded",
                url: &url,
                oauth,
                env,
                timeout: Duration::from_secs(60),
                browser: &curl(),
            })
            .await
    }
}

/// A browser that follows the redirects.
pub fn curl() -> Browser {
    Browser::Command(["curl", "-s", "-L", "-o", "/dev/null"].map(str::to_owned).to_vec())
}

pub fn env(pairs: &[(&str, &str)]) -> EnvLookup {
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    Arc::new(move |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
}

pub fn oauth(value: Value) -> OAuthConfig {
    serde_json::from_value(value).unwrap()
}

pub fn fixture(options: OAuthOptions) -> OAuthServer {
    OAuthServer::start(options).unwrap()
}

fn methods(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The one token request, which the fixture granted.
fn granted(fixture: &OAuthServer) -> TokenRequest {
    let requests = fixture.token_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].status, 200, "{requests:?}");
    requests[0].clone()
}

#[tokio::test]
async fn an_authorization_server_taking_only_client_secret_basic_registers_and_gets_the_secret_in_the_header() {
    let fixture = fixture(OAuthOptions { auth_methods: methods(&["client_secret_basic"]), ..OAuthOptions::default() });
    let signing = Signing::new();
    let login = signing.login(&fixture, None, &env(&[])).await.unwrap();
    let registered = fixture.registrations();
    assert_eq!(registered[0].metadata["token_endpoint_auth_method"], "client_secret_basic", "{registered:?}");
    assert_eq!(granted(&fixture).auth_method, "client_secret_basic");
    assert_eq!(login.token_auth_method.as_deref(), Some("client_secret_basic"));
}

#[tokio::test]
async fn a_registered_client_that_must_post_its_secret_posts_it() {
    let fixture = fixture(OAuthOptions {
        auth_methods: methods(&["client_secret_post", "client_secret_basic"]),
        registration_method: Some("client_secret_post".to_owned()),
        ..OAuthOptions::default()
    });
    Signing::new().login(&fixture, None, &env(&[])).await.unwrap();
    assert_eq!(granted(&fixture).auth_method, "client_secret_post");
}

#[tokio::test]
async fn a_public_client_sends_its_id_alone() {
    let fixture = fixture(OAuthOptions::default());
    Signing::new().login(&fixture, None, &env(&[])).await.unwrap();
    assert_eq!(fixture.registrations()[0].metadata["token_endpoint_auth_method"], "none");
    assert_eq!(granted(&fixture).auth_method, "none");
}

#[tokio::test]
async fn a_client_registered_beforehand_authenticates_as_the_metadata_asks() {
    let fixture = fixture(OAuthOptions {
        auth_methods: methods(&["client_secret_basic"]),
        registration: false,
        clients: vec![("desk".to_owned(), Some("pre-secret".to_owned()))],
        ..OAuthOptions::default()
    });
    let config = oauth(json!({ "client_id": "desk", "client_secret": "${env:DESK_SECRET}" }));
    let signing = Signing::new();
    let login = signing.login(&fixture, Some(&config), &env(&[("DESK_SECRET", "pre-secret")])).await.unwrap();
    assert_eq!(granted(&fixture).auth_method, "client_secret_basic");
    // The configured secret stays in the environment.
    assert_eq!(login.client_secret, None);
}

#[tokio::test]
async fn a_machine_signs_in_with_a_private_key_from_the_environment() {
    let fixture = fixture(OAuthOptions {
        auth_methods: methods(&["private_key_jwt"]),
        clients: vec![("machine".to_owned(), None)],
        ..OAuthOptions::default()
    });
    let config =
        oauth(json!({ "grant": "client_credentials", "client_id": "machine", "private_key": "${env:MACHINE_KEY}" }));
    let signing = Signing::new();
    let pem = fixture.client_key_pem();
    let login = signing.login(&fixture, Some(&config), &env(&[("MACHINE_KEY", &pem)])).await.unwrap();
    let request = granted(&fixture);
    assert_eq!((request.grant_type.as_str(), request.auth_method.as_str()), ("client_credentials", "private_key_jwt"));
    assert_eq!(request.client_id.as_deref(), Some("machine"));
    assert_eq!(login.token_auth_method.as_deref(), Some("private_key_jwt"));
}

#[tokio::test]
async fn a_private_key_file_others_can_read_is_refused_before_anything_is_sent() {
    use std::os::unix::fs::PermissionsExt as _;
    let fixture = fixture(OAuthOptions {
        auth_methods: methods(&["private_key_jwt"]),
        clients: vec![("machine".to_owned(), None)],
        ..OAuthOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("machine.pem");
    std::fs::write(&file, fixture.client_key_pem()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let config = oauth(json!({ "grant": "client_credentials", "client_id": "machine", "private_key": file }));
    let signing = Signing::new();
    let error = signing.login(&fixture, Some(&config), &env(&[])).await.unwrap_err().to_string();
    assert!(error.contains("can be read by others") && error.contains("chmod 600"), "{error}");
    assert!(fixture.token_requests().is_empty());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    signing.login(&fixture, Some(&config), &env(&[])).await.unwrap();
    assert_eq!(granted(&fixture).auth_method, "private_key_jwt");
}

#[tokio::test]
async fn a_2025_03_26_server_is_signed_in_to_through_metadata_at_its_origin() {
    let fixture = fixture(OAuthOptions { era: Era::OriginMetadata, ..OAuthOptions::default() });
    let login = Signing::new().login(&fixture, None, &env(&[])).await.unwrap();
    assert_eq!(granted(&fixture).grant_type, "authorization_code");
    assert_eq!(login.token_endpoint, format!("{}/token", fixture.issuer()));
    assert!(fixture.issuer().ends_with("/oauth"), "{}", fixture.issuer());
}

#[tokio::test]
async fn a_2025_03_26_server_without_metadata_is_signed_in_to_at_the_default_endpoints() {
    let fixture = fixture(OAuthOptions { era: Era::DefaultEndpoints, ..OAuthOptions::default() });
    let login = Signing::new().login(&fixture, None, &env(&[])).await.unwrap();
    assert_eq!(fixture.registrations().len(), 1);
    assert_eq!(fixture.authorizations().len(), 1);
    assert_eq!(granted(&fixture).grant_type, "authorization_code");
    assert!(login.token_endpoint.ends_with("/token"), "{}", login.token_endpoint);
}
