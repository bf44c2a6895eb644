//! `mcpflow service --db URL --listen ADDR` (issue 34): a team's service on a store in
//! PostgreSQL. Its door: loopback only, a token of the operator's in every hello (a wrong
//! or missing one is refused without saying the token), and clear refusals of what it
//! cannot be. The studio's side (a run a worker runs, played live) is the e2e test
//! `tests/e2e/team.test.mjs`. Skips without PostgreSQL; fails then under `CI=true`.

use crate::spawned::{Killed, said_on_stderr};
use crate::stderr;
use mcpflow_testkit::postgres::Cluster;
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};

const TOKEN: &str = "0123456789abcdef0123456789abcdef-team";

fn service(url: Option<&str>, listen: &str, token: Option<&str>) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    command.args(["service", "--listen", listen]).env_remove("MCPFLOW_SERVICE_TOKEN").env_remove("MCPFLOW_DB");
    if let Some(url) = url {
        command.args(["--db", url]);
    }
    if let Some(token) = token {
        command.env("MCPFLOW_SERVICE_TOKEN", token);
    }
    command
}

/// A team service on database `url` with `extra` flags, its data folder in `dir`, killed
/// when dropped (also when the test fails); where it says it answers.
fn running(url: &str, dir: &std::path::Path, extra: &[&str]) -> (Killed, String) {
    let mut child = service(Some(url), "127.0.0.1:0", Some(TOKEN))
        .args(extra)
        .env("MCPFLOW_HOME", dir.join("home"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (said, _rest) = said_on_stderr(&mut child, "answers at ");
    let at = said.split("answers at ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    (Killed(child), at)
}

/// Says `hello` on a new connection to `addr`; the welcome, and the connection.
fn greet(addr: &str, hello: &Value) -> (Value, BufReader<TcpStream>) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(format!("{hello}\n").as_bytes()).unwrap();
    let mut read = BufReader::new(stream);
    let mut line = String::new();
    read.read_line(&mut line).unwrap();
    (serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")), read)
}

#[test]
fn a_team_service_wants_a_database_a_long_token_and_a_loopback_address() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let out = service(None, "127.0.0.1:0", Some(TOKEN)).env("MCPFLOW_HOME", &home).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("give --db URL (or MCPFLOW_DB) too"), "{}", stderr(&out));
    let Some(cluster) = Cluster::shared() else { return };
    let url = cluster.database();
    let out = service(Some(&url), "127.0.0.1:0", Some("short")).env("MCPFLOW_HOME", &home).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("MCPFLOW_SERVICE_TOKEN has 5 characters"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("short"), "the token is not shown: {}", stderr(&out));
    let out = service(Some(&url), "0.0.0.0:0", Some(TOKEN)).env("MCPFLOW_HOME", &home).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a loopback address"), "{}", stderr(&out));
    assert!(stderr(&out).contains("ssh -L"), "{}", stderr(&out));
}

#[test]
fn a_team_service_answers_a_hello_with_its_token_and_refuses_one_without() {
    let Some(cluster) = Cluster::shared() else { return };
    let url = cluster.database();
    let dir = tempfile::tempdir().unwrap();
    let (_service, addr) = running(&url, dir.path(), &[]);
    let hello = |token: Option<&str>| json!({ "mcpflow": 2, "session": "api", "client": "test", "token": token });

    for (token, got) in [(None, "did not carry"), (Some("0123456789abcdef0123456789abcdef-wrong"), "got wrong")] {
        let (welcome, _) = greet(&addr, &hello(token));
        assert_eq!(welcome["ok"], false, "{welcome}");
        assert_eq!(welcome["error"]["code"], "BAD_TOKEN", "{welcome}");
        let message = welcome["error"]["message"].as_str().unwrap();
        assert!(message.contains("MCPFLOW_SERVICE_TOKEN") && message.contains(got), "{message}");
        assert!(!message.contains(TOKEN), "the token is never said: {message}");
    }

    let (welcome, mut read) = greet(&addr, &hello(Some(TOKEN)));
    assert_eq!(welcome["ok"], true, "{welcome}");
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": "blueprints/list", "params": {} });
    read.get_mut().write_all(format!("{request}\n").as_bytes()).unwrap();
    let mut line = String::new();
    read.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["result"], json!([]), "{answer}");
}

/// A certificate authority and a certificate for `localhost` and 127.0.0.1 signed by it
/// (openssl, P-256), in `dir`: (the CA's PEM, the certificate's, its key's).
fn certificates(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl is installed");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl(
        &[
            &["req", "-x509"],
            &ec[..],
            &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=team test CA"],
        ]
        .concat(),
    );
    openssl(&[&["req"], &ec[..], &["-keyout", "key.pem", "-out", "leaf.csr", "-subj", "/CN=localhost"]].concat());
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
    ]);
    (dir.join("ca.pem"), dir.join("cert.pem"), dir.join("key.pem"))
}

#[test]
fn a_team_service_over_tls_answers_a_client_that_trusts_its_ca_and_no_plain_hello() {
    use mcpflow_service::endpoint::{TeamAddress, Token};
    let Some(cluster) = Cluster::shared() else { return };
    let url = cluster.database();
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(dir.path());
    let (_service, at) =
        running(&url, dir.path(), &["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()]);
    assert!(at.starts_with("tls://127.0.0.1:"), "{at}");
    let port = at.rsplit(':').next().unwrap().to_owned();

    // A plain hello gets no welcome: the service speaks TLS first.
    let mut plain = TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    let hello = json!({ "mcpflow": 2, "session": "api", "client": "test", "token": TOKEN });
    plain.write_all(format!("{hello}\n").as_bytes()).unwrap();
    let mut line = String::new();
    let _ = BufReader::new(plain).read_line(&mut line);
    assert!(!line.contains("\"ok\""), "a plain hello was answered: {line}");

    // A client that trusts the team's CA is welcomed, and served.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let to = TeamAddress::parse(&format!("tls://localhost:{port}")).unwrap();
        let connector = mcpflow_service::tls::connector(Some(&ca)).unwrap();
        let token = Token::from_secret(TOKEN).unwrap();
        let hello: mcpflow_service::Hello = serde_json::from_value(hello.clone()).unwrap();
        let (mut read, mut write, welcome) =
            mcpflow_service::connect_team(&to, token.clone(), Some(&connector), &hello).await.unwrap();
        assert!(welcome.ok, "{welcome:?}");
        use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
        let request = json!({ "jsonrpc": "2.0", "id": 1, "method": "blueprints/list", "params": {} });
        write.write_all(format!("{request}\n").as_bytes()).await.unwrap();
        let mut line = String::new();
        read.read_line(&mut line).await.unwrap();
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["result"], json!([]), "{line}");

        // One that does not trust it gets no further than the handshake.
        let stranger = mcpflow_service::tls::connector(Some(&cert)).unwrap();
        let Err(refused) = mcpflow_service::connect_team(&to, token, Some(&stranger), &hello).await else {
            panic!("a client that does not trust the certificate was welcomed")
        };
        assert_eq!(refused.code, "SERVICE_UNAVAILABLE", "{refused:?}");
        assert!(refused.message.to_lowercase().contains("certificate"), "{}", refused.message);
    });
}
