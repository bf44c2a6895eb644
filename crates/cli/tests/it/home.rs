//! The data folder is the user's alone: made 0700 (its store 0700, the store's files
//! 0600) even under umask 000, and a folder group or others can write to is refused
//! with `DATA_FOLDER_NOT_PRIVATE` and what to do.

use crate::{repo, stderr, stdout};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output};

/// `mcpflow run --store` of a one-step blueprint in data folder `home`, under umask 000
/// (through `sh`, so the umask is set in the child only).
fn run_stored(dir: &Path, home: &Path) -> Output {
    let bp = dir.join("bp.json");
    std::fs::write(&bp, r#"{"blueprint":1,"id":"one","steps":[{"id":"n","kind":"transform","value":"{{ `1` }}"}]}"#)
        .unwrap();
    Command::new("sh")
        .args(["-c", r#"umask 000; exec "$0" run "$1" --store"#])
        .arg(env!("CARGO_BIN_EXE_mcpflow"))
        .arg(&bp)
        .current_dir(repo())
        .env("MCPFLOW_HOME", home)
        .output()
        .unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_data_folder_made_under_umask_000_is_the_users_alone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("shared/mcpflow");
    let out = run_stored(dir.path(), &home);
    assert_eq!(out.status.code(), Some(0), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    assert_eq!(mode(&home), 0o700, "the data folder");
    assert_eq!(mode(&dir.path().join("shared")), 0o700, "a parent it made");
    let store = home.join("store");
    assert_eq!(mode(&store), 0o700, "the store's folder");
    let mut files = 0;
    let mut folders = vec![store];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                assert_eq!(mode(&path), 0o700, "{}", path.display());
                folders.push(path);
            } else {
                assert_eq!(mode(&path), 0o600, "{}", path.display());
                files += 1;
            }
        }
    }
    assert!(files > 0, "sled wrote no file");
}

#[test]
fn a_data_folder_others_can_write_to_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = run_stored(dir.path(), &home);
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("DATA_FOLDER_NOT_PRIVATE"), "{err}");
    assert!(err.contains(&format!("`chmod 700 {}`", home.display())), "{err}");
    assert!(!home.join("store").exists(), "nothing was made in it");
}
