//! `mcpflow setup HOST`: the host's configuration file gets the entry that launches this
//! `mcpflow serve`, found where the host reads it, the rest of the file kept.

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

fn setup(home: &Path, args: &[&str], data: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    command
        .arg("setup")
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("MCPFLOW_HOME")
        .current_dir(repo());
    if let Some(data) = data {
        command.env("MCPFLOW_HOME", data);
    }
    command.output().unwrap()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn each_host_gets_the_entry_in_its_own_file_and_shape() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_mcpflow")).unwrap();
    let data = home.join("data");

    // Cursor: an existing file with another server and another setting.
    let cursor = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, r#"{"mcpServers": {"memory": {"command": "npx"}}, "other": true}"#).unwrap();
    let out = setup(home, &["cursor"], Some(&data));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("added the `mcpflow` server"), "{}", stderr(&out));
    let doc = read(&cursor);
    assert_eq!(doc["mcpServers"]["memory"], json!({ "command": "npx" }));
    assert_eq!(doc["other"], true);
    let entry = &doc["mcpServers"]["mcpflow"];
    assert_eq!(std::fs::canonicalize(entry["command"].as_str().unwrap()).unwrap(), binary);
    assert_eq!(entry["args"], json!(["serve"]));
    assert_eq!(entry["env"]["MCPFLOW_HOME"], data.display().to_string());
    let again = setup(home, &["cursor"], Some(&data));
    assert!(stderr(&again).contains("already has this `mcpflow` server"), "{}", stderr(&again));

    // Claude Desktop on Linux: under the config folder; created when missing.
    let out = setup(home, &["claude-desktop", "--name", "flows"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let claude = read(&home.join(".config/Claude/claude_desktop_config.json"));
    assert_eq!(claude["mcpServers"]["flows"]["args"], json!(["serve"]));
    assert!(claude["mcpServers"]["flows"].get("env").is_none(), "{claude}");

    // VS Code: `servers`, typed stdio; --print writes nothing.
    let vscode = home.join(".config/Code/User/mcp.json");
    let out = setup(home, &["vscode", "--print"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(printed["servers"]["mcpflow"]["type"], "stdio");
    assert!(stderr(&out).contains(&vscode.display().to_string()), "{}", stderr(&out));
    assert!(!vscode.exists());
}

#[test]
fn a_file_that_is_not_plain_json_is_left_alone_and_the_entry_shown() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let text = "{\n  // my servers\n  \"servers\": {}\n}\n";
    std::fs::write(&file, text).unwrap();
    let out = setup(dir.path(), &["vscode", "--config", file.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("mcp.json:2:") && err.contains("by hand") && err.contains("\"type\": \"stdio\""), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}
