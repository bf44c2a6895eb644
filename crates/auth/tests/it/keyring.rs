//! The token vault against a real Secret Service: Debian's gnome-keyring
//! (`gnome-keyring-daemon --components=secrets`) in a D-Bus session of its own
//! (`dbus-run-session`), unlocked with a password on stdin, read back with `secret-tool`
//! (libsecret, another client than ours). Each test re-executes this test binary inside
//! that session (or with no bus at all); the tools are installed by `scripts/test.sh`,
//! and a test skips — loudly — only where they are missing and `CI` is not `true` (under
//! CI it fails).

use mcpflow_auth::{Login, TokenStore, Vault};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the re-executed test: which part to run.
const INNER: &str = "MCPFLOW_KEYRING_TEST_INNER";

fn login(resource: &str, token: &str) -> Login {
    Login {
        resource: resource.into(),
        audience: None,
        server: "s".into(),
        grant: "authorization_code".into(),
        access_token: token.into(),
        refresh_token: Some(format!("RT-{token}")),
        expires_at_ms: None,
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

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
}

/// Runs test `name` of this binary again with `INNER=part`, inside a fresh D-Bus session
/// with an unlocked gnome-keyring when `keyring`, else with no session bus at all.
#[allow(clippy::print_stderr, reason = "a skipped test says so where cargo test shows it")]
fn reexec(name: &str, part: &str, keyring: bool) -> bool {
    if keyring {
        let missing: Vec<_> = ["dbus-run-session", "dbus-send", "gnome-keyring-daemon", "secret-tool"]
            .into_iter()
            .filter(|t| !on_path(t))
            .collect();
        if !missing.is_empty() {
            // Under CI a missing Secret Service is a broken machine, not a skip.
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{name}: {} not installed, and CI=true (Debian: apt-get install dbus gnome-keyring libsecret-tools; \
                 scripts/test.sh installs them)",
                missing.join(", ")
            );
            eprintln!(
                "\n*** SKIPPED {name}: {} not installed (Debian: apt-get install dbus gnome-keyring \
                 libsecret-tools; scripts/test.sh installs them) ***\n",
                missing.join(", ")
            );
            return false;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let mut command = if keyring {
        let mut c = Command::new("dbus-run-session");
        c.args([
            "--",
            "sh",
            "-c",
            "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 97; exec \"$0\" \"$@\"",
        ]);
        c.arg(&exe);
        c
    } else {
        let mut c = Command::new(&exe);
        c.env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", dir.path().join("no-bus").display()));
        c
    };
    command
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(INNER, part)
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("MCPFLOW_TEST_DATA", dir.path().join("mcpflow"))
        .env_remove("MCPFLOW_TOKEN_STORE");
    if keyring {
        command.env_remove("DBUS_SESSION_BUS_ADDRESS");
    }
    let out = output_within(command, std::time::Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name} ({part}) failed:\n{stdout}\n{stderr}");
    // The inner run ran the test (not zero tests by a wrong name).
    assert!(stdout.contains("1 passed"), "{name} ({part}) ran no test:\n{stdout}\n{stderr}");
    true
}

/// `command`'s output, killed (and the test failed) after `limit`: a keyring that hangs
/// fails the test instead of holding it.
fn output_within(mut command: Command, limit: std::time::Duration) -> std::process::Output {
    let mut child = command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("still running after {limit:?}:\n{}", String::from_utf8_lossy(&out.stdout));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn inner() -> Option<(String, PathBuf)> {
    let part = std::env::var(INNER).ok()?;
    Some((part, PathBuf::from(std::env::var_os("MCPFLOW_TEST_DATA")?)))
}

/// What `secret-tool lookup` finds for `resource` of data folder `data`.
fn lookup(data: &Path, resource: &str) -> Option<String> {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", "mcpflow", "resource", resource, "data_folder"])
        .arg(data)
        .output()
        .unwrap();
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn file_text(vault: &Vault) -> String {
    std::fs::read_to_string(vault.path()).unwrap_or_default()
}

#[test]
fn logins_go_to_the_secret_service_and_not_to_the_file() {
    let Some((_, data)) = inner() else {
        reexec("keyring::logins_go_to_the_secret_service_and_not_to_the_file", "keyring", true);
        return;
    };
    // A login signed in before the keyring was used, in the file.
    Vault::in_data_dir_with(&data, TokenStore::File).put(login("http://old/mcp", "AT-old")).unwrap();

    let vault = Vault::in_data_dir(&data);
    assert_eq!(vault.store().unwrap(), TokenStore::Keyring);
    assert_eq!(vault.describe_store().unwrap(), "OS keyring (Secret Service)");
    // The file's login still works.
    assert_eq!(vault.get("http://old/mcp").unwrap().unwrap().access_token, "AT-old");

    vault.put(login("http://new/mcp", "AT-new")).unwrap();
    let item = lookup(&data, "http://new/mcp").expect("secret-tool finds the login in the keyring");
    let item: serde_json::Value = serde_json::from_str(&item).unwrap();
    assert_eq!(item["access_token"], "AT-new");
    assert_eq!(item["refresh_token"], "RT-AT-new");
    assert!(!file_text(&vault).contains("AT-new"), "{}", file_text(&vault));
    assert_eq!(vault.get("http://new/mcp").unwrap().unwrap().access_token, "AT-new");
    // Another data folder does not see it.
    let other = data.with_file_name("other");
    assert!(Vault::in_data_dir(&other).get("http://new/mcp").unwrap().is_none());

    // A login written again (a refresh) moves from the file to the keyring.
    vault.put(login("http://old/mcp", "AT-old2")).unwrap();
    assert!(!file_text(&vault).contains("AT-old"), "{}", file_text(&vault));
    assert!(lookup(&data, "http://old/mcp").unwrap().contains("AT-old2"));
    let mut list: Vec<_> = vault.list().unwrap().into_iter().map(|l| l.access_token).collect();
    list.sort();
    assert_eq!(list, ["AT-new", "AT-old2"]);

    assert!(vault.remove("http://new/mcp").unwrap());
    assert!(lookup(&data, "http://new/mcp").is_none());
    assert!(vault.get("http://new/mcp").unwrap().is_none());
    assert!(!vault.remove("http://new/mcp").unwrap());

    // Locked now: the logins are there but cannot be read. Never an empty file instead.
    // (`secret-tool lock` waits forever on gnome-keyring 42; the Service's `Lock` does not.)
    let locked = Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--reply-timeout=5000",
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/collection/login",
        ])
        .status()
        .unwrap();
    assert!(locked.success());
    for vault in [vault.clone(), Vault::in_data_dir(&data)] {
        let error = vault.get("http://old/mcp").unwrap_err();
        assert_eq!(error.code(), "AUTH_VAULT");
        let message = error.to_string();
        assert!(message.contains("OS keyring (Secret Service)") && message.contains("locked"), "{message}");
        assert!(!message.contains("AT-old"), "{message}");
    }
    let error = Vault::in_data_dir(&data).put(login("http://x/mcp", "AT-x")).unwrap_err();
    assert!(error.to_string().contains("MCPFLOW_TOKEN_STORE=file"), "{error}");
    // A data folder that never used the keyring keeps the file, silently.
    let fresh = Vault::in_data_dir(&data.with_file_name("fresh"));
    assert_eq!(fresh.store().unwrap(), TokenStore::File);
    fresh.put(login("http://f/mcp", "AT-f")).unwrap();
    assert!(file_text(&fresh).contains("AT-f"));
}

#[test]
fn without_a_session_bus_tokens_stay_in_the_file() {
    let Some((_, data)) = inner() else {
        reexec("keyring::without_a_session_bus_tokens_stay_in_the_file", "no-bus", false);
        return;
    };
    // Without a bus the probe fails at once (a bus that does not answer is bounded by
    // the keyring's own probe timeout, and the whole run by `output_within`).
    let vault = Vault::in_data_dir(&data);
    assert_eq!(vault.store().unwrap(), TokenStore::File);
    assert!(vault.describe_store().unwrap().starts_with("file "));
    vault.put(login("http://a/mcp", "AT-a")).unwrap();
    assert!(file_text(&vault).contains("AT-a"));
    assert_eq!(vault.get("http://a/mcp").unwrap().unwrap().access_token, "AT-a");

    // A data folder whose logins went to a keyring that is gone now: an error saying so.
    let used = data.with_file_name("used");
    std::fs::create_dir_all(used.join("auth")).unwrap();
    std::fs::write(used.join("auth/keyring"), "").unwrap();
    let error = Vault::in_data_dir(&used).get("http://a/mcp").unwrap_err();
    assert_eq!(error.code(), "AUTH_VAULT");
    assert!(error.to_string().contains("is not running"), "{error}");
    // Forcing the file is the way out.
    assert!(Vault::in_data_dir_with(&used, TokenStore::File).get("http://a/mcp").unwrap().is_none());
}
