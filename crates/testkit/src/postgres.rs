//! A throwaway PostgreSQL cluster for tests: `initdb` in a temporary folder, the server
//! listening only on a Unix socket in that folder (no TCP port at all, so nothing to
//! collide with), one empty database per test ([`Cluster::database`]).
//!
//! One cluster serves a whole test process ([`Cluster::shared`]): it starts on first use
//! (about a second) and stops when the process exits, however it exits: the cluster is
//! started by a small shell that waits for its stdin — a pipe from the test process — to
//! close, then stops the server and removes the folder.
//!
//! `initdb` refuses to run as root; as root the cluster runs as the `postgres` user the
//! Debian package creates (and owns its folder). The binaries are found through
//! `MCPFLOW_TEST_PG_BIN`, else `initdb` on `PATH`, else Debian's
//! `/usr/lib/postgresql/<newest>/bin`. Without them [`Cluster::shared`] is `None` (the
//! test skips) — or, under `CI=true`, panics saying what to install.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// A running throwaway cluster.
#[derive(Debug)]
pub struct Cluster {
    folder: PathBuf,
    /// Closing it (when the process exits) stops the cluster.
    _watch: Mutex<(Child, ChildStdin)>,
    next: Mutex<u32>,
}

/// What the watchdog shell does: $1 is the folder, $2 the binaries.
const SCRIPT: &str = r#"
set -e
trap '' INT TERM HUP
"$2/initdb" -D "$1/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$1/initdb.log" 2>&1
"$2/pg_ctl" -D "$1/data" -l "$1/server.log" -w -s \
    -o "-k $1 -c listen_addresses= -c fsync=off -c full_page_writes=off -c max_connections=300" start
echo ready
cat >/dev/null || true
"$2/pg_ctl" -D "$1/data" -m immediate -w -s stop || true
rm -rf "$1"
"#;

impl Cluster {
    /// The cluster of this test process, started on first use. `None` when PostgreSQL is
    /// not installed, unless `CI=true`: then that is a failure, with what to install.
    #[allow(clippy::panic, clippy::print_stderr)]
    pub fn shared() -> Option<&'static Cluster> {
        static SHARED: OnceLock<Result<Cluster, String>> = OnceLock::new();
        match SHARED.get_or_init(Cluster::start) {
            Ok(cluster) => Some(cluster),
            Err(why) if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
                panic!("PostgreSQL is needed for this test under CI=true: {why}")
            }
            Err(why) => {
                eprintln!("skipping a PostgreSQL test: {why}");
                None
            }
        }
    }

    fn start() -> Result<Cluster, String> {
        let bin = binaries().ok_or(
            "no PostgreSQL binaries (initdb, pg_ctl) found in MCPFLOW_TEST_PG_BIN, on PATH or in \
             /usr/lib/postgresql/*/bin; install the Debian package `postgresql` (scripts/test.sh does)",
        )?;
        let folder = tempfile::Builder::new()
            .prefix("mcpflow-pg-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary folder: {e}"))?
            .keep();
        let mut command = Command::new("sh");
        command.arg("-c").arg(SCRIPT).arg("sh").arg(&folder).arg(&bin);
        as_unprivileged(&mut command, &folder)?;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start sh for the PostgreSQL cluster: {e}"))?;
        let stdin = child.stdin.take().ok_or("the cluster's shell has no stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("the cluster's shell has no stdout")?);
        let mut line = String::new();
        // The shell prints `ready` once the server accepts connections, or exits.
        let _ = stdout.read_line(&mut line);
        if line.trim() != "ready" {
            let mut stderr = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = err.read_to_string(&mut stderr);
            }
            let logs = ["initdb.log", "server.log"]
                .map(|log| std::fs::read_to_string(folder.join(log)).unwrap_or_default())
                .join("\n");
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&folder);
            return Err(format!("the throwaway cluster did not start: {stderr}\n{logs}"));
        }
        Ok(Cluster { folder, _watch: Mutex::new((child, stdin)), next: Mutex::new(0) })
    }

    /// The folder of the server's Unix socket.
    pub fn socket_folder(&self) -> &Path {
        &self.folder
    }

    /// A new empty database; its URL (`postgresql://postgres@/tN?host=FOLDER`).
    #[allow(clippy::panic)]
    pub fn database(&self) -> String {
        let n = {
            let mut next = self.next.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *next += 1;
            *next
        };
        let name = format!("t{n}");
        let out = Command::new(bin_of("createdb"))
            .args(["-h", &self.folder.to_string_lossy(), "-U", "postgres", &name])
            .output()
            .unwrap_or_else(|e| panic!("cannot run createdb: {e}"));
        assert!(out.status.success(), "createdb {name} failed: {}", String::from_utf8_lossy(&out.stderr));
        format!("postgresql://postgres@/{name}?host={}", self.folder.display())
    }
}

/// The folder of `initdb` and `pg_ctl`.
fn binaries() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MCPFLOW_TEST_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path).find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
    });
    if let Some(dir) = on_path {
        // Debian links them into /usr/local/bin at most; the real ones sit together.
        return Some(std::fs::canonicalize(dir.join("initdb")).ok()?.parent()?.to_owned());
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// `name` from the cluster's binaries (they are there: the cluster started).
fn bin_of(name: &str) -> PathBuf {
    binaries().map(|bin| bin.join(name)).unwrap_or_else(|| PathBuf::from(name))
}

/// As root, runs `command` as the `postgres` user and gives it `folder`.
fn as_unprivileged(command: &mut Command, folder: &Path) -> Result<(), String> {
    #[cfg(unix)]
    if nix::unistd::geteuid().is_root() {
        use std::os::unix::process::CommandExt as _;
        let user = nix::unistd::User::from_name("postgres")
            .ok()
            .flatten()
            .ok_or("running as root, and there is no `postgres` user to run initdb as (initdb refuses root)")?;
        std::os::unix::fs::chown(folder, Some(user.uid.as_raw()), Some(user.gid.as_raw()))
            .map_err(|e| format!("cannot give {} to the postgres user: {e}", folder.display()))?;
        command.uid(user.uid.as_raw()).gid(user.gid.as_raw()).env("HOME", &user.dir);
    }
    #[cfg(not(unix))]
    let _ = (command, folder);
    Ok(())
}
