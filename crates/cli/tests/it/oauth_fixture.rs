//! Signing in as a person does — `mcpflow auth login`, then `mcpflow run` — against the
//! testkit's OAuth fixture (`mcpflow_testkit::oauth`, in this process on loopback): a
//! server of the 2025-03-26 era (no protected resource metadata), an authorization
//! server that takes only `client_secret_basic`, and a step-up with `run --sign-in`.
//! `$BROWSER` is `curl` following the redirects of the fixture's `/authorize`, which
//! approves at once.

use crate::{stderr, stdout};
use mcpflow_testkit::oauth::{Era, OAuthOptions, OAuthServer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BROWSER: &str = "curl -s -L -o /dev/null";

struct Setup {
    dir: tempfile::TempDir,
    servers: PathBuf,
    blueprint: PathBuf,
}

impl Setup {
    /// Server `guarded` at the fixture, with `oauth` when given; a blueprint calling its
    /// `echo`.
    fn new(fixture: &OAuthServer, oauth: Option<Value>) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let mut entry = json!({ "url": fixture.url() });
        if let Some(oauth) = oauth {
            entry["oauth"] = oauth;
        }
        let servers = dir.path().join("servers.json");
        std::fs::write(&servers, json!({ "mcpServers": { "guarded": entry } }).to_string()).unwrap();
        let blueprint = dir.path().join("echo.json");
        let doc = json!({ "blueprint": 1, "id": "echo",
            "steps": [{ "id": "e", "kind": "tool", "server": "guarded", "tool": "echo", "args": { "said": "hello" } }],
            "output": { "said": "{{ e.said }}" } });
        std::fs::write(&blueprint, doc.to_string()).unwrap();
        Setup { dir, servers, blueprint }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn mcpflow(&self, args: &[&str], browser: &str, env: &[(&str, &str)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_mcpflow"))
            .args(args)
            .env("MCPFLOW_TOKEN_STORE", "file")
            .env("MCPFLOW_HOME", self.home())
            .env("BROWSER", browser)
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }

    fn login(&self, env: &[(&str, &str)]) -> Output {
        let servers = self.servers.to_str().unwrap();
        self.mcpflow(&["auth", "login", "guarded", "--servers", servers, "--timeout", "60"], BROWSER, env)
    }

    /// `mcpflow run` of the blueprint; `browser` is what `$BROWSER` may open.
    fn run(&self, extra: &[&str], browser: &str, env: &[(&str, &str)]) -> Output {
        let mut args = vec!["run", self.blueprint.to_str().unwrap(), "--servers", self.servers.to_str().unwrap()];
        args.push("--json");
        args.extend_from_slice(extra);
        self.mcpflow(&args, browser, env)
    }
}

fn succeeded(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(out), stderr(out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded", "{envelope}");
    assert_eq!(envelope["output"]["said"], "hello", "{envelope}");
    envelope
}

/// Whether `needle` is in any file under `dir`.
fn anywhere_under(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).into_iter().flatten().flatten().any(|entry| {
        let path = entry.path();
        if path.is_dir() {
            anywhere_under(&path, needle)
        } else {
            std::fs::read(&path).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
        }
    })
}

fn a_2025_03_26_server(era: Era) {
    let fixture = OAuthServer::start(OAuthOptions { era, ..OAuthOptions::default() }).unwrap();
    let setup = Setup::new(&fixture, None);
    let login = setup.login(&[]);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    let ran = setup.run(&[], "/bin/false", &[]);
    succeeded(&ran);
    let requests = fixture.token_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!((requests[0].grant_type.as_str(), requests[0].status), ("authorization_code", 200));
    for token in fixture.issued_tokens() {
        let shown = format!("{}{}{}{}", stdout(&login), stderr(&login), stdout(&ran), stderr(&ran));
        assert!(!shown.contains(&token), "{shown}");
    }
}

#[test]
fn a_2025_03_26_server_with_metadata_at_its_origin_is_signed_in_to_and_run() {
    a_2025_03_26_server(Era::OriginMetadata);
}

#[test]
fn a_2025_03_26_server_without_metadata_is_signed_in_to_at_the_default_endpoints_and_run() {
    a_2025_03_26_server(Era::DefaultEndpoints);
}

#[test]
fn an_authorization_server_taking_only_client_secret_basic_gets_the_configured_secret_in_the_header() {
    const SECRET: &str = "desk-secret-5a1f0c9e";
    let fixture = OAuthServer::start(OAuthOptions {
        auth_methods: vec!["client_secret_basic".to_owned()],
        registration: false,
        clients: vec![("desk".to_owned(), Some(SECRET.to_owned()))],
        ..OAuthOptions::default()
    })
    .unwrap();
    let setup = Setup::new(&fixture, Some(json!({ "client_id": "desk", "client_secret": "${env:DESK_SECRET}" })));
    let env = [("DESK_SECRET", SECRET)];
    let login = setup.login(&env);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    let ran = setup.run(&[], "/bin/false", &env);
    succeeded(&ran);
    let requests = fixture.token_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!((requests[0].auth_method.as_str(), requests[0].status), ("client_secret_basic", 200));
    let shown = format!("{}{}{}{}", stdout(&login), stderr(&login), stdout(&ran), stderr(&ran));
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(!anywhere_under(&setup.home(), SECRET), "the configured secret was written in the data folder");
}

#[test]
fn run_with_sign_in_signs_in_again_when_a_tool_needs_more_scope() {
    let fixture = OAuthServer::start(OAuthOptions {
        scopes_supported: vec!["files:read".to_owned()],
        tool_scope: Some("files:write".to_owned()),
        ..OAuthOptions::default()
    })
    .unwrap();
    let setup = Setup::new(&fixture, None);
    let login = setup.login(&[]);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    // Without leave to open the browser: AUTH_REQUIRED naming the scope.
    let refused = setup.run(&[], "/bin/false", &[]);
    assert_ne!(refused.status.code(), Some(0));
    assert!(
        stdout(&refused).contains("AUTH_REQUIRED") && stdout(&refused).contains("files:write"),
        "{}",
        stdout(&refused)
    );
    let ran = setup.run(&["--sign-in"], BROWSER, &[]);
    succeeded(&ran);
    assert!(stderr(&ran).contains("asks for more scope (files:read files:write)"), "{}", stderr(&ran));
    let asked: Vec<Vec<String>> = fixture.authorizations().into_iter().map(|a| a.scopes).collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[1].contains(&"files:write".to_owned()), "{asked:?}");
}
