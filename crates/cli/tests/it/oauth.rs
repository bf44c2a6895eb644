//! OAuth against a server nobody here wrote: the official TypeScript SDK's example
//! `simpleStreamableHttp --oauth` (its demo authorization server on `MCP_AUTH_PORT`:
//! metadata, dynamic registration, `/authorize` that redirects at once, PKCE checked).
//! `$BROWSER` is `tests/fixtures/follow-redirects.mjs`, which really goes through the
//! SDK's `/authorize` to mcpflow's loopback callback.
//!
//! The SDK's demo provider issues no refresh tokens, so the refresh tests run the same
//! example through `tests/fixtures/sdk-oauth-refresh.mjs`, which adds them to the
//! demo provider and leaves the rest of the SDK's code as it is. The example answers a
//! token it does not know with 500, not 401; the refresh after a 401 is shown with a
//! 2026-07-28 resource server on the Python SDK 2.x (`tests/fixtures/oauth_resource_py.py`,
//! the SDK's own bearer check) whose tokens the same authorization server issues.

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The SDK's example server, killed when dropped; its stderr kept.
struct SdkServer {
    child: Child,
    port: u16,
    auth_port: u16,
    stderr: Arc<Mutex<String>>,
}

impl Drop for SdkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port()
}

fn fixture(name: &str) -> PathBuf {
    repo().join("crates/cli/tests/fixtures").join(name)
}

/// Starts `script` (the SDK example or the refresh wrapper) with `args`, on free ports,
/// and waits for both of its servers to say they listen.
fn start(script: &Path, args: &[&str]) -> SdkServer {
    start_with(script, args, &[])
}

fn start_with(script: &Path, args: &[&str], env: &[(&str, &str)]) -> SdkServer {
    assert!(script.is_file(), "{} is missing: run `npm ci`", script.display());
    let (port, auth_port) = (free_port(), free_port());
    let mut child = Command::new("node")
        .arg(script)
        .args(args)
        .envs(env.iter().copied())
        .env("MCP_PORT", port.to_string())
        .env("MCP_AUTH_PORT", auth_port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = Arc::new(Mutex::new(String::new()));
    let err = BufReader::new(child.stderr.take().unwrap());
    let kept = stderr.clone();
    std::thread::spawn(move || {
        for line in err.lines().map_while(Result::ok) {
            kept.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let out = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut listening = 0;
    while listening < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("{} did not start: {}", script.display(), stderr.lock().unwrap()));
        if line.contains("listening on port") {
            listening += 1;
        }
    }
    std::thread::spawn(move || while rx.recv().is_ok() {});
    SdkServer { child, port, auth_port, stderr }
}

struct Setup {
    dir: tempfile::TempDir,
    servers: PathBuf,
    /// Calls `greet` (the TypeScript example's tool).
    greet: PathBuf,
    /// Calls `era` (the Python server's tool).
    blueprint: PathBuf,
}

impl Setup {
    fn new(server: &SdkServer) -> Setup {
        Setup::on(server.port)
    }

    /// For the server on `port` (at `http://localhost:PORT/mcp`).
    fn on(port: u16) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let servers = dir.path().join("servers.json");
        // `localhost`, as the example names itself: the token's audience is that URL.
        let url = format!("http://localhost:{port}/mcp");
        std::fs::write(&servers, json!({ "mcpServers": { "demo": { "url": url } } }).to_string()).unwrap();
        let blueprint = dir.path().join("greet.json");
        let doc = json!({ "blueprint": 1, "id": "greet",
            "steps": [{ "id": "hi", "kind": "tool", "server": "demo", "tool": "greet", "args": { "name": "oauth" } }],
            "output": { "hi": "{{ hi }}" } });
        std::fs::write(&blueprint, doc.to_string()).unwrap();
        let blueprint = dir.path().join("era.json");
        let doc = json!({ "blueprint": 1, "id": "era",
            "steps": [{ "id": "era", "kind": "tool", "server": "demo", "tool": "era", "args": {} }],
            "output": { "era": "{{ era.result }}" } });
        std::fs::write(&blueprint, doc.to_string()).unwrap();
        Setup { greet: dir.path().join("greet.json"), dir, servers, blueprint }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn vault(&self) -> PathBuf {
        self.home().join("auth/tokens.json")
    }

    /// `mcpflow ARGS` with this data folder and `browser` as `$BROWSER`.
    fn mcpflow(&self, args: &[&str], browser: &str) -> Output {
        self.mcpflow_env(args, browser, &[])
    }

    fn mcpflow_env(&self, args: &[&str], browser: &str, env: &[(&str, &str)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_mcpflow"))
            .args(args)
            // These tests read and edit the vault file; `keyring.rs` signs in with a keyring.
            .env("MCPFLOW_TOKEN_STORE", "file")
            .envs(env.iter().copied())
            .current_dir(repo())
            .env("MCPFLOW_HOME", self.home())
            .env("BROWSER", browser)
            .env("MCPFLOW_TEST_BROWSER_LOG", self.dir.path().join("browser.log"))
            .env("RUST_LOG", "debug")
            .output()
            .unwrap()
    }

    fn login(&self, store: bool) -> Output {
        let browser = format!("node {}", fixture("follow-redirects.mjs").display());
        let mut args = vec!["auth", "login", "demo", "--servers", self.servers.to_str().unwrap(), "--timeout", "60"];
        if store {
            args.push("--store");
        }
        self.mcpflow(&args, &browser)
    }

    /// A run of `greet` that must not open a browser: `$BROWSER` fails.
    fn run(&self, extra: &[&str]) -> Output {
        self.run_file(&self.greet, extra)
    }

    fn run_file(&self, file: &Path, extra: &[&str]) -> Output {
        let mut args = vec!["run", file.to_str().unwrap(), "--servers", self.servers.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        self.mcpflow(&args, "/bin/false")
    }

    fn login_record(&self) -> Value {
        let vault: Value = serde_json::from_slice(&std::fs::read(self.vault()).unwrap()).unwrap();
        let logins = vault["logins"].as_object().unwrap();
        assert_eq!(logins.len(), 1, "{vault}");
        logins.values().next().unwrap().clone()
    }

    fn edit_login(&self, edit: impl FnOnce(&mut Value)) {
        let mut vault: Value = serde_json::from_slice(&std::fs::read(self.vault()).unwrap()).unwrap();
        let login = vault["logins"].as_object_mut().unwrap().values_mut().next().unwrap();
        edit(login);
        std::fs::write(self.vault(), vault.to_string()).unwrap();
    }
}

fn succeeded(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(out), stderr(out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded", "{envelope}");
    assert_eq!(envelope["output"]["hi"], "Hello, oauth!", "{envelope}");
    envelope
}

/// Every file under `dir`, as bytes.
fn files_under(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_run_without_a_login_fails_fast_with_auth_required_naming_the_command() {
    let server = start(&repo().join(SDK_EXAMPLE), &["--oauth"]);
    let setup = Setup::new(&server);
    let out = setup.run(&[]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("AUTH_REQUIRED"), "{text}");
    // The command finds the server where the run found it.
    assert!(text.contains(&format!("mcpflow auth login demo --servers {}`", setup.servers.display())), "{text}");
    // Fast: no browser, no waiting for a timeout (that would end in another code than
    // AUTH_REQUIRED).
    assert!(!setup.dir.path().join("browser.log").exists(), "a run opened the browser");
    // A vault that is not one mcpflow wrote is reported as such, with what to do.
    std::fs::create_dir_all(setup.vault().parent().unwrap()).unwrap();
    std::fs::write(setup.vault(), "not json").unwrap();
    let run = setup.run(&[]);
    assert!(stdout(&run).contains("AUTH_VAULT") && stdout(&run).contains("sign in again"), "{}", stdout(&run));
    std::fs::remove_file(setup.vault()).unwrap();
    // `servers test` says the same, and shows the server as needing a login.
    let test = setup.mcpflow(&["servers", "test", "--servers", setup.servers.to_str().unwrap()], "/bin/false");
    assert!(
        stdout(&test).contains("error[AUTH_REQUIRED]") && stdout(&test).contains("oauth: needs login"),
        "{}",
        stdout(&test)
    );
}

const SDK_EXAMPLE: &str = "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js";

#[test]
fn login_then_runs_reuse_and_refresh_the_token_which_appears_nowhere_else() {
    let server = start(&fixture("sdk-oauth-refresh.mjs"), &["--oauth"]);
    let setup = Setup::new(&server);
    let mut said = String::new();
    let mut keep = |out: &Output| said.push_str(&format!("{}{}", stdout(out), stderr(out)));

    // Signing in goes through the SDK's /authorize with PKCE S256 and the resource.
    let login = setup.login(true);
    keep(&login);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    let visited = std::fs::read_to_string(setup.dir.path().join("browser.log")).unwrap();
    let authorize = visited.lines().next().unwrap();
    assert!(authorize.starts_with("http://localhost:") && authorize.contains("/authorize?"), "{visited}");
    assert!(authorize.contains("code_challenge_method=S256"), "{authorize}");
    assert!(authorize.contains(&format!("resource=http%3A%2F%2Flocalhost%3A{}%2Fmcp", server.port)), "{authorize}");
    assert!(visited.lines().nth(1).unwrap().starts_with("http://127.0.0.1:"), "{visited}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(setup.vault()).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let first = setup.login_record();
    let access1 = first["access_token"].as_str().unwrap().to_owned();
    let refresh = first["refresh_token"].as_str().unwrap().to_owned();

    // A run calls its tools with the token; a browser that fails proves none is opened.
    let events = setup.dir.path().join("events.ndjson");
    let run = setup.run(&["--store", "--events", events.to_str().unwrap()]);
    keep(&run);
    succeeded(&run);
    let run = setup.run(&[]);
    keep(&run);
    succeeded(&run);
    assert_eq!(setup.login_record()["access_token"], access1.as_str(), "the token was reused, not replaced");

    // An expired token (its expiry moved into the past) is refreshed before use.
    setup.edit_login(|l| l["expires_at_ms"] = json!(1_000));
    let run = setup.run(&["--store"]);
    keep(&run);
    succeeded(&run);
    assert_said(&server.stderr, "REFRESHED 1");
    let access2 = setup.login_record()["access_token"].as_str().unwrap().to_owned();
    assert_ne!(access2, access1);

    // (A token the server refuses is not tested here: this example answers an unknown or
    // expired token with 500, not 401 — its verifier throws a plain `Error`, which the
    // SDK's `requireBearerAuth` turns into `server_error`.)
    let access3 = access2.clone();

    let status =
        setup.mcpflow(&["auth", "status", "--json", "--servers", setup.servers.to_str().unwrap()], "/bin/false");
    keep(&status);
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["signed_in"], true, "{status}");
    assert_eq!(status["refreshable"], true, "{status}");
    assert_eq!(status["scopes"], json!(["mcp:tools"]), "{status}");

    let export = setup.mcpflow(&["export"], "/bin/false");
    keep(&export);
    assert_eq!(export.status.code(), Some(0), "{}", stderr(&export));

    // The tokens are in the vault and nowhere else: not in the store's files, the
    // `--events` output, the export, or anything mcpflow printed.
    let mut files = Vec::new();
    files_under(&setup.home(), &mut files);
    files.push((events.clone(), std::fs::read(&events).unwrap()));
    files.push(("export".into(), export.stdout.clone()));
    files.push(("mcpflow's output".into(), said.clone().into_bytes()));
    assert!(files.iter().any(|(p, _)| p.starts_with(setup.home().join("store"))), "no store files");
    for secret in [&access1, &access2, &access3, &refresh] {
        for (path, bytes) in &files {
            if path == &setup.vault() {
                continue;
            }
            assert!(!contains(bytes, secret), "a token is in {}", path.display());
        }
    }
    // Signing out deletes the login here and revokes the refresh token at the
    // authorization server (its RFC 7009 endpoint), and says so.
    let logout = setup.mcpflow(&["auth", "logout", "demo", "--servers", setup.servers.to_str().unwrap()], "/bin/false");
    assert_eq!(logout.status.code(), Some(0), "{}", stderr(&logout));
    assert!(stderr(&logout).contains("the authorization server revoked them"), "{}", stderr(&logout));
    assert!(!contains(&logout.stderr, &refresh), "the refresh token was printed");
    assert_said(&server.stderr, "REVOKED refresh_token known");
    assert!(!contains(&std::fs::read(setup.vault()).unwrap(), &access3));
    let run = setup.run(&[]);
    assert!(stdout(&run).contains("AUTH_REQUIRED"), "{}", stdout(&run));
}

#[test]
fn logout_deletes_the_login_here_whatever_the_authorization_server_answers() {
    let logout = |setup: &Setup| {
        let out =
            setup.mcpflow(&["auth", "logout", "demo", "--servers", setup.servers.to_str().unwrap()], "/bin/false");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let vault = std::fs::read_to_string(setup.vault()).unwrap_or_default();
        assert!(!vault.contains("access_token"), "the login is still in the vault: {vault}");
        stderr(&out)
    };

    // An authorization server without a revocation endpoint (the SDK's demo as it is).
    let server = start_with(&fixture("sdk-oauth-refresh.mjs"), &["--oauth"], &[("MCPFLOW_TEST_NO_REVOCATION", "1")]);
    let setup = Setup::new(&server);
    assert_eq!(setup.login(false).status.code(), Some(0));
    let said = logout(&setup);
    assert!(said.contains("offers no revocation"), "{said}");
    assert!(!server.stderr.lock().unwrap().contains("REVOKED"), "{}", server.stderr.lock().unwrap());

    // An authorization server that is gone: deleted here all the same, and said so.
    let server = start(&fixture("sdk-oauth-refresh.mjs"), &["--oauth"]);
    let setup = Setup::new(&server);
    assert_eq!(setup.login(false).status.code(), Some(0));
    drop(server);
    let said = logout(&setup);
    assert!(said.contains("the authorization server was not told"), "{said}");

    // Nothing to sign out of: said so.
    let said = logout(&setup);
    assert!(said.contains("held no sign-in"), "{said}");
}

#[test]
fn oauth_strict_passes() {
    // The SDK's example as it is, accepting only tokens issued for its own URL: the
    // `resource` mcpflow sends must be the server's canonical URL.
    let server = start(&repo().join(SDK_EXAMPLE), &["--oauth", "--oauth-strict"]);
    let setup = Setup::new(&server);
    let login = setup.login(false);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    succeeded(&setup.run(&[]));
}

#[test]
fn a_2026_07_28_server_refusing_the_token_with_401_gets_it_refreshed_once() {
    let authority = start(&fixture("sdk-oauth-refresh.mjs"), &["--oauth"]);
    let port = free_port();
    let issuer = format!("http://localhost:{}/", authority.auth_port);
    let python = crate::venv_python();
    let script = fixture("oauth_resource_py.py");
    let mut child = Command::new(python)
        .args([script.to_str().unwrap(), &port.to_string(), &issuer])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in err.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let resource = PythonServer(child);
    loop {
        let line = rx.recv_timeout(Duration::from_secs(30)).expect("the Python server did not start");
        if line.contains("Uvicorn running on") {
            break;
        }
    }
    std::thread::spawn(move || while rx.recv().is_ok() {});

    let setup = Setup::on(port);
    let login = setup.login(false);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    let run = setup.run_file(&setup.blueprint, &[]);
    assert_eq!(run.status.code(), Some(0), "{}{}", stdout(&run), stderr(&run));
    let envelope: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(envelope["output"]["era"], "2026-07-28", "{envelope}");

    // The vault says the token is good for an hour; the server says 401.
    setup.edit_login(|l| l["access_token"] = json!("a-token-nobody-issued"));
    let run = setup.run_file(&setup.blueprint, &[]);
    assert_eq!(run.status.code(), Some(0), "{}{}", stdout(&run), stderr(&run));
    assert_said(&authority.stderr, "REFRESHED 1");
    assert_ne!(setup.login_record()["access_token"], "a-token-nobody-issued");

    // A refresh token the authorization server refuses: AUTH_REQUIRED, fast, no browser.
    setup.edit_login(|l| {
        l["access_token"] = json!("a-token-nobody-issued");
        l["refresh_token"] = json!("a-refresh-token-nobody-issued");
    });
    let run = setup.run_file(&setup.blueprint, &[]);
    assert_eq!(run.status.code(), Some(1), "{}{}", stdout(&run), stderr(&run));
    assert!(
        stdout(&run).contains("AUTH_REQUIRED") && stdout(&run).contains("mcpflow auth login demo"),
        "{}",
        stdout(&run)
    );
    drop(resource);
}

#[test]
fn a_long_session_renews_its_token_before_it_expires() {
    // Tokens live 64 s; mcpflow renews one that expires within 60 s. The session opens
    // with a token good for about 63 s (nothing to renew), then two `multi-greet` calls
    // take 2 s each: the next request, on the same session, must carry a renewed token.
    let server = start_with(&fixture("sdk-oauth-refresh.mjs"), &["--oauth"], &[("MCPFLOW_TEST_TOKEN_TTL", "64")]);
    let setup = Setup::new(&server);
    let login = setup.login(false);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    let file = setup.dir.path().join("long.json");
    let doc = json!({ "blueprint": 1, "id": "long", "steps": [
        { "id": "a", "kind": "tool", "server": "demo", "tool": "greet", "args": { "name": "a" } },
        { "id": "b", "kind": "tool", "server": "demo", "tool": "multi-greet", "args": { "name": "{{ a }}" } },
        { "id": "c", "kind": "tool", "server": "demo", "tool": "multi-greet", "args": { "name": "{{ b }}" } },
        { "id": "d", "kind": "tool", "server": "demo", "tool": "greet", "args": { "name": "{{ c }}" } }
    ], "output": "{{ d }}" });
    std::fs::write(&file, doc.to_string()).unwrap();
    let run = setup.run_file(&file, &[]);
    assert_eq!(run.status.code(), Some(0), "{}{}", stdout(&run), stderr(&run));
    assert_said(&server.stderr, "REFRESHED 1");
}

#[test]
fn a_server_the_blueprint_declares_is_signed_in_to_through_its_file() {
    let server = start(&repo().join(SDK_EXAMPLE), &["--oauth"]);
    let setup = Setup::new(&server);
    let file = setup.dir.path().join("own.json");
    let doc = json!({ "blueprint": 1, "id": "own",
        "servers": { "mine": { "url": format!("http://localhost:{}/mcp", server.port) } },
        "steps": [{ "id": "hi", "kind": "tool", "server": "mine", "tool": "greet", "args": { "name": "oauth" } }],
        "output": { "hi": "{{ hi }}" } });
    std::fs::write(&file, doc.to_string()).unwrap();
    let run = setup.mcpflow(&["run", file.to_str().unwrap(), "--json"], "/bin/false");
    let advice = format!("mcpflow auth login mine --blueprint {}`", file.display());
    assert!(stdout(&run).contains("AUTH_REQUIRED") && stdout(&run).contains(&advice), "{}", stdout(&run));
    let browser = format!("node {}", fixture("follow-redirects.mjs").display());
    let login =
        setup.mcpflow(&["auth", "login", "mine", "--blueprint", file.to_str().unwrap(), "--timeout", "60"], &browser);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    succeeded(&setup.run_file(&file, &[]));
}

#[test]
fn a_machine_signs_in_with_client_credentials_without_a_browser() {
    const SECRET: &str = "s3cret-of-the-ci-client-0451";
    let Machine { setup, issued, port, issuer, _servers } = machine(SECRET, &[]);

    // No `auth login`: the run fetches a token itself, and a second run reuses it.
    let env = [("CI_SECRET", SECRET)];
    for _ in 0..2 {
        let run = setup.mcpflow_env(
            &["run", setup.blueprint.to_str().unwrap(), "--servers", setup.servers.to_str().unwrap(), "--json"],
            "/bin/false",
            &env,
        );
        assert_eq!(run.status.code(), Some(0), "{}{}", stdout(&run), stderr(&run));
        assert!(!stdout(&run).contains(SECRET) && !stderr(&run).contains(SECRET));
    }
    let log = issued.lock().unwrap().clone();
    assert_eq!(log.matches("ISSUED").count(), 1, "{log}");
    assert!(log.contains(&format!("resource=http://localhost:{port}/mcp")), "{log}");
    let login = setup.login_record();
    assert_eq!(login["grant"], "client_credentials", "{login}");
    assert!(login.get("refresh_token").is_none(), "{login}");
    // The configured secret stays in the environment: the vault does not keep it.
    assert!(!std::fs::read_to_string(setup.vault()).unwrap().contains(SECRET));

    // A wrong secret: what the authorization server said.
    std::fs::remove_file(setup.vault()).unwrap();
    let run = setup.mcpflow_env(
        &["run", setup.blueprint.to_str().unwrap(), "--servers", setup.servers.to_str().unwrap(), "--json"],
        "/bin/false",
        &[("CI_SECRET", "wrong")],
    );
    assert_eq!(run.status.code(), Some(1), "{}{}", stdout(&run), stderr(&run));
    assert!(stdout(&run).contains("AUTH_FAILED") && stdout(&run).contains("invalid_client"), "{}", stdout(&run));

    // A server that wants a scope the token lacks (403 insufficient_scope): AUTH_REQUIRED,
    // no re-authorization by a run.
    let strict_port = free_port();
    let (_strict, _) = python(&fixture("oauth_resource_py.py"), &[&strict_port.to_string(), &issuer, "admin"], &[]);
    wait_for_port(strict_port);
    let entry = json!({ "url": format!("http://localhost:{strict_port}/mcp"),
        "oauth": { "grant": "client_credentials", "client_id": "ci", "client_secret": "${env:CI_SECRET}", "scopes": ["tools:call"] } });
    std::fs::write(&setup.servers, json!({ "mcpServers": { "demo": entry } }).to_string()).unwrap();
    let run = setup.mcpflow_env(
        &["run", setup.blueprint.to_str().unwrap(), "--servers", setup.servers.to_str().unwrap(), "--json"],
        "/bin/false",
        &env,
    );
    assert_eq!(run.status.code(), Some(1), "{}{}", stdout(&run), stderr(&run));
    assert!(stdout(&run).contains("AUTH_REQUIRED") && stdout(&run).contains("wider scope"), "{}", stdout(&run));
}

/// A Python fixture of `.venv-test/`, killed when dropped; its stderr kept.
fn python(script: &Path, args: &[&str], env: &[(&str, &str)]) -> (PythonServer, Arc<Mutex<String>>) {
    let mut child = Command::new(crate::venv_python())
        .arg(script)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let kept = Arc::new(Mutex::new(String::new()));
    let err = BufReader::new(child.stderr.take().unwrap());
    let into = kept.clone();
    std::thread::spawn(move || {
        for line in err.lines().map_while(Result::ok) {
            into.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    (PythonServer(child), kept)
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on port {port} after 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

struct PythonServer(Child);

/// The client-credentials fixtures running: the authorization server (its client `ci`
/// with `secret`), the resource server that trusts it (with `resource_env`), and a setup
/// whose servers file names it `demo`, the secret as `${env:CI_SECRET}`. The servers
/// stop when `_servers` is dropped: bind it for as long as the test needs them.
struct Machine {
    setup: Setup,
    /// The resource server's port, and the authorization server's URL (its issuer).
    port: u16,
    issuer: String,
    /// What the authorization server logged (the tokens it issued).
    issued: Arc<Mutex<String>>,
    _servers: (PythonServer, PythonServer),
}

fn machine(secret: &str, resource_env: &[(&str, &str)]) -> Machine {
    let (as_port, port) = (free_port(), free_port());
    let (authority, issued) =
        python(&fixture("oauth_machine_as.py"), &[&as_port.to_string()], &[("FIXTURE_CLIENT_SECRET", secret)]);
    wait_for_port(as_port);
    let issuer = format!("http://localhost:{as_port}/");
    let (resource, _) = python(&fixture("oauth_resource_py.py"), &[&port.to_string(), &issuer], resource_env);
    wait_for_port(port);
    let setup = Setup::on(port);
    let entry = json!({ "url": format!("http://localhost:{port}/mcp"),
        "oauth": { "grant": "client_credentials", "client_id": "ci", "client_secret": "${env:CI_SECRET}", "scopes": ["tools:call"] } });
    std::fs::write(&setup.servers, json!({ "mcpServers": { "demo": entry } }).to_string()).unwrap();
    Machine { setup, issued, port, issuer, _servers: (authority, resource) }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_tool_call_refused_for_want_of_a_scope_is_auth_required_naming_it_and_remembered_for_the_next_sign_in() {
    const SECRET: &str = "s3cret-of-the-ci-client-0452";
    // The session opens with the token's `tools:call`; only `purge` needs `admin`.
    let Machine { setup, _servers, .. } = machine(SECRET, &[("FIXTURE_PURGE_SCOPE", "admin")]);
    let blueprint = setup.dir.path().join("purge.json");
    let doc = json!({ "blueprint": 1, "id": "purge", "steps": [
        { "id": "era", "kind": "tool", "server": "demo", "tool": "era", "args": {} },
        { "id": "purge", "kind": "tool", "server": "demo", "tool": "purge", "args": {}, "after": ["era"] }
    ] });
    std::fs::write(&blueprint, doc.to_string()).unwrap();
    let run = setup.mcpflow_env(
        &["run", blueprint.to_str().unwrap(), "--servers", setup.servers.to_str().unwrap(), "--events", "-"],
        "/bin/false",
        &[("CI_SECRET", SECRET)],
    );
    assert_eq!(run.status.code(), Some(1), "{}{}", stdout(&run), stderr(&run));
    let events: Vec<Value> = stdout(&run).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let finished = |step: &str| {
        events
            .iter()
            .find(|e| e["type"] == "StepFinished" && e["step"] == step)
            .unwrap_or_else(|| panic!("no end of `{step}` in {}", stdout(&run)))
            .clone()
    };
    // The connection was not refused: the first call went through.
    assert!(finished("era")["error"].is_null(), "{}", finished("era"));
    // The call was: AUTH_REQUIRED naming the scope and what to do, not a dead connection.
    let error = &finished("purge")["error"];
    assert_eq!(error["code"], "AUTH_REQUIRED", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("`admin`") && message.contains("oauth.scopes"), "{message}");
    // Remembered with the sign-in: the next one asks for it.
    let login = setup.login_record();
    assert_eq!(login["step_up"], json!(["admin"]), "{login}");
}

/// Set in the copy of a test re-executed inside a D-Bus session with a keyring.
const KEYRING_INNER: &str = "MCPFLOW_OAUTH_KEYRING_INNER";

/// Runs test `name` again inside a fresh D-Bus session whose gnome-keyring is unlocked
/// (`dbus-run-session`, `gnome-keyring-daemon --unlock` with a password on stdin);
/// `false` (said loudly) where those tools are missing — `scripts/test.sh` installs them.
#[allow(clippy::print_stderr, reason = "a skipped test says so where cargo test shows it")]
fn in_a_keyring_session(name: &str) -> bool {
    let on_path = |tool: &str| {
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|dir| dir.join(tool).is_file()))
    };
    let missing: Vec<_> =
        ["dbus-run-session", "gnome-keyring-daemon", "secret-tool"].into_iter().filter(|t| !on_path(t)).collect();
    if !missing.is_empty() {
        eprintln!(
            "\n*** SKIPPED {name}: {} not installed (Debian: apt-get install dbus gnome-keyring libsecret-tools; \
             scripts/test.sh installs them) ***\n",
            missing.join(", ")
        );
        return false;
    }
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let mut child = Command::new("dbus-run-session")
        .args([
            "--",
            "sh",
            "-c",
            "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 97; exec \"$0\" \"$@\"",
        ])
        .arg(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(KEYRING_INNER, "1")
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success() && stdout(&out).contains("1 passed"), "{name}:\n{}\n{}", stdout(&out), stderr(&out));
    true
}

#[test]
fn with_an_os_keyring_the_login_lives_there_and_runs_use_it() {
    if std::env::var_os(KEYRING_INNER).is_none() {
        in_a_keyring_session("oauth::with_an_os_keyring_the_login_lives_there_and_runs_use_it");
        return;
    }
    let server = start(&repo().join(SDK_EXAMPLE), &["--oauth"]);
    let setup = Setup::new(&server);
    let servers = setup.servers.to_str().unwrap();
    // No store forced: the keyring is there, so the vault uses it.
    let auto = [("MCPFLOW_TOKEN_STORE", "")];
    let browser = format!("node {}", fixture("follow-redirects.mjs").display());
    let login = setup.mcpflow_env(&["auth", "login", "demo", "--servers", servers, "--timeout", "60"], &browser, &auto);
    assert_eq!(login.status.code(), Some(0), "{}{}", stdout(&login), stderr(&login));
    assert!(!setup.vault().exists(), "the login went to {}", setup.vault().display());
    // Another Secret Service client reads it back.
    let url = format!("http://localhost:{}/mcp", server.port);
    let item = Command::new("secret-tool")
        .args(["lookup", "service", "mcpflow", "resource", &url, "data_folder"])
        .arg(setup.home())
        .output()
        .unwrap();
    let item: Value = serde_json::from_slice(&item.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&item)));
    let token = item["access_token"].as_str().unwrap().to_owned();
    assert!(!token.is_empty());

    // A run takes the token from the keyring.
    let run =
        setup.mcpflow_env(&["run", setup.greet.to_str().unwrap(), "--servers", servers, "--json"], "/bin/false", &auto);
    succeeded(&run);
    let status = setup.mcpflow_env(&["auth", "status", "--servers", servers], "/bin/false", &auto);
    let text = stdout(&status);
    assert!(text.contains("signed in (authorization_code)"), "{text}{}", stderr(&status));
    assert!(text.contains("tokens: OS keyring (Secret Service)"), "{text}");
    assert!(!format!("{text}{}", stderr(&status)).contains(&token));

    // Forced to the file, the keyring's login is not there.
    let status = setup.mcpflow(&["auth", "status", "--servers", servers], "/bin/false");
    let text = stdout(&status);
    assert!(text.contains("not signed in"), "{text}");
    assert!(text.contains(&format!("tokens: file {} (user-only)", setup.vault().display())), "{text}");

    // The keyring gone (no bus): not a silent empty file, but AUTH_VAULT with what to do.
    let no_bus = [("MCPFLOW_TOKEN_STORE", ""), ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")];
    let run = setup.mcpflow_env(
        &["run", setup.greet.to_str().unwrap(), "--servers", servers, "--json"],
        "/bin/false",
        &no_bus,
    );
    assert_eq!(run.status.code(), Some(1), "{}{}", stdout(&run), stderr(&run));
    let text = format!("{}{}", stdout(&run), stderr(&run));
    assert!(text.contains("AUTH_VAULT") && text.contains("MCPFLOW_TOKEN_STORE=file"), "{text}");
    // A data folder that never used it: the file, silently.
    let fresh = Setup::on(server.port);
    let status = fresh.mcpflow_env(&["auth", "status", "--servers", servers], "/bin/false", &no_bus);
    assert!(
        stdout(&status).contains(&format!("tokens: file {} (user-only)", fresh.vault().display())),
        "{}",
        stdout(&status)
    );

    // Signed out: the item leaves the keyring.
    let logout = setup.mcpflow_env(&["auth", "logout", "demo", "--servers", servers], "/bin/false", &auto);
    assert_eq!(logout.status.code(), Some(0), "{}", stderr(&logout));
    let gone = Command::new("secret-tool")
        .args(["lookup", "service", "mcpflow", "resource", &url, "data_folder"])
        .arg(setup.home())
        .output()
        .unwrap();
    assert!(!gone.status.success() && gone.stdout.is_empty());
}

#[test]
fn an_access_token_a_server_quotes_in_its_error_shows_nowhere() {
    const SECRET: &str = "s3cret-of-the-ci-client-0453";
    let Machine { setup, _servers, .. } = machine(SECRET, &[]);
    let blueprint = setup.dir.path().join("whoami.json");
    let doc = json!({ "blueprint": 1, "id": "whoami",
        "steps": [{ "id": "who", "kind": "tool", "server": "demo", "tool": "whoami", "args": {} }] });
    std::fs::write(&blueprint, doc.to_string()).unwrap();
    let events = setup.dir.path().join("events.jsonl");
    let env = [("CI_SECRET", SECRET)];
    let run = setup.mcpflow_env(
        &[
            "run",
            blueprint.to_str().unwrap(),
            "--servers",
            setup.servers.to_str().unwrap(),
            "--json",
            "--store",
            "--events",
            events.to_str().unwrap(),
        ],
        "/bin/false",
        &env,
    );
    assert_eq!(run.status.code(), Some(1), "the step fails: {}{}", stdout(&run), stderr(&run));
    let token = setup.login_record()["access_token"].as_str().unwrap().to_owned();
    let envelope: Value = serde_json::from_slice(&run.stdout).unwrap();
    let message = envelope["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("token <OAuth access token> is not allowed"),
        "the server's words, the token hidden: {envelope}"
    );
    let run_id = envelope["run_id"].as_str().unwrap().to_owned();
    // Everything the run left: its output, the events, the run history as `show` and
    // `export` give it, and the data folder's files but the vault (where the token lives).
    let show = setup.mcpflow_env(&["show", &run_id, "--events"], "/bin/false", &env);
    let export = setup.mcpflow_env(&["export"], "/bin/false", &env);
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    assert_eq!(export.status.code(), Some(0), "{}", stderr(&export));
    assert!(contains(&show.stdout, "<OAuth access token>"), "{}", stdout(&show));
    let mut left = vec![
        ("stdout".into(), run.stdout.clone()),
        ("stderr".into(), run.stderr.clone()),
        (events.clone(), std::fs::read(&events).unwrap()),
        ("show".into(), show.stdout),
        ("export".into(), export.stdout),
    ];
    files_under(&setup.home(), &mut left);
    for (what, bytes) in &left {
        if what.starts_with(setup.home().join("auth")) {
            continue;
        }
        assert!(!contains(bytes, &token), "the access token is in {}", what.display());
        assert!(!contains(bytes, SECRET), "the client secret is in {}", what.display());
    }
}

/// Waits for the authorization server's stderr (read on a thread of its own) to hold
/// `line`: the answer reaches mcpflow a moment before the line reaches this test.
fn assert_said(stderr: &Mutex<String>, line: &str) {
    let said =
        crate::spawned::wait_for(Duration::from_secs(20), || stderr.lock().unwrap().contains(line).then_some(()));
    assert!(said.is_some(), "the authorization server did not say `{line}`: {}", stderr.lock().unwrap());
}
