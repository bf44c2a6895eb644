//! Finding — and, when it is missing or older than its sources, building — the `mcpflow-testkit` binary,
//! for tests of other crates that start the fixtures as child processes.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
    time::SystemTime,
};

const BIN: &str = "mcpflow-testkit";
/// Set to a path to use that binary as is (no lookup, no build).
const OVERRIDE_ENV: &str = "MCPFLOW_TESTKIT_BIN";

static BINARY: OnceLock<PathBuf> = OnceLock::new();

/// Path of the `mcpflow-testkit` binary of the running test's profile.
///
/// Looks next to the running executable (`target/<profile>/deps/<test>` →
/// `target/<profile>/mcpflow-testkit`). When the binary is missing, or older than a source file of this
/// crate, runs `cargo build -p mcpflow-testkit --bin mcpflow-testkit` for the same profile and target
/// directory, once per process. `MCPFLOW_TESTKIT_BIN` overrides the lookup. Never downloads anything.
///
/// # Panics
///
/// When the binary cannot be found or built; this is test support, where a panic is the clearest failure.
pub fn binary() -> PathBuf {
    BINARY.get_or_init(locate_or_build).clone()
}

#[allow(clippy::panic, reason = "test support: failing loudly is the useful behaviour")]
fn locate_or_build() -> PathBuf {
    if let Some(path) = std::env::var_os(OVERRIDE_ENV) {
        return PathBuf::from(path);
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => panic!("mcpflow-testkit: cannot find the running executable: {error}"),
    };
    let Some(profile_dir) = profile_dir(&exe) else {
        panic!("mcpflow-testkit: cannot find the target directory above {}", exe.display());
    };
    let path = profile_dir.join(format!("{BIN}{}", std::env::consts::EXE_SUFFIX));
    if is_fresh(&path) {
        return path;
    }
    if let Err(message) = build(&profile_dir) {
        panic!("mcpflow-testkit: building {BIN} failed: {message}");
    }
    if !path.is_file() {
        panic!("mcpflow-testkit: cargo built {BIN} but it is not at {}", path.display());
    }
    path
}

/// `target/<profile>` for an executable in `target/<profile>`, `.../deps` or `.../examples`.
fn profile_dir(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("deps" | "examples") => dir.parent().map(Path::to_path_buf),
        _ => Some(dir.to_path_buf()),
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    path.metadata().and_then(|m| m.modified()).ok()
}

/// Whether `binary` exists and is newer than every source of this crate that can still be found.
fn is_fresh(binary: &Path) -> bool {
    let Some(built) = modified(binary) else {
        return false;
    };
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut newest = modified(&crate_dir.join("Cargo.toml"));
    let mut pending = vec![crate_dir.join("src")];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                newest = newest.max(modified(&path));
            }
        }
    }
    newest.is_none_or(|newest| newest <= built)
}

fn build(profile_dir: &Path) -> Result<(), String> {
    let target_dir = profile_dir.parent().ok_or("the profile directory has no parent")?;
    let profile = profile_dir.file_name().and_then(|n| n.to_str()).ok_or("the profile directory has no name")?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from(env!("CARGO")));
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut command = Command::new(cargo);
    command.args(["build", "--quiet", "-p", "mcpflow-testkit", "--bin", BIN]);
    command.arg("--manifest-path").arg(&manifest).arg("--target-dir").arg(target_dir);
    match profile {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    tracing::info!(?command, "building the fixture binary");
    let status = command.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`{command:?}` exited with {status}")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_dir_skips_deps_and_examples() {
        let target = Path::new("/w/target/debug");
        assert_eq!(profile_dir(&target.join("deps/it-0123")), Some(target.to_path_buf()));
        assert_eq!(profile_dir(&target.join("examples/demo")), Some(target.to_path_buf()));
        assert_eq!(profile_dir(&target.join("mcpflow")), Some(target.to_path_buf()));
    }

    #[test]
    fn a_missing_binary_is_not_fresh() {
        assert!(!is_fresh(Path::new("/nonexistent/mcpflow-testkit")));
    }
}
