//! Reading a file to import it into the studio (a blueprint, an `mcpServers` file): the
//! blueprint parser's errors with `file:line:col`, never a key silently dropped.

use mcpflow_app::blueprints::{read_blueprint_file, read_json_file};
use serde_json::json;

#[test]
fn a_file_is_read_as_written_and_a_bom_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ok.blueprint.json");
    let doc = json!({ "blueprint": 1, "id": "ok", "steps": [{ "id": "a", "kind": "transform", "value": 1 }] });
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(serde_json::to_vec_pretty(&doc).unwrap());
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(read_blueprint_file(&path).unwrap(), doc);
}

#[test]
fn a_duplicate_key_is_an_error_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.blueprint.json");
    std::fs::write(&path, "{\n  \"blueprint\": 1,\n  \"id\": \"a\",\n  \"id\": \"b\",\n  \"steps\": []\n}\n").unwrap();
    let e = read_blueprint_file(&path).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:4:", path.display())), "{e}");
    assert!(e.contains("JSON_DUPLICATE_KEY"), "{e}");
}

#[test]
fn bad_bytes_missing_files_and_huge_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let utf8 = dir.path().join("latin1.json");
    std::fs::write(&utf8, b"{\"id\": \"caf\xe9\"}").unwrap();
    let e = read_blueprint_file(&utf8).unwrap_err().to_string();
    assert!(e.contains("JSON_INVALID_UTF8") && e.contains(":1:"), "{e}");

    let e = read_blueprint_file(&dir.path().join("missing.json")).unwrap_err().to_string();
    assert!(e.starts_with("could not read") && e.contains("missing.json"), "{e}");

    let huge = dir.path().join("huge.json");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(6 * 1024 * 1024).unwrap();
    let e = read_blueprint_file(&huge).unwrap_err().to_string();
    assert!(e.contains(":1:1: error[LIMIT_SIZE]: a blueprint is larger than the limit of 5242880 bytes (5 MB)"), "{e}");
}

/// The studio's Import reads at most one byte past the limit: `/dev/zero` (or a FIFO)
/// is refused, not read until memory runs out.
#[test]
fn an_endless_file_is_refused_by_size_while_reading() {
    for e in [
        read_blueprint_file(std::path::Path::new("/dev/zero")).unwrap_err().to_string(),
        read_json_file(std::path::Path::new("/dev/zero"), "a servers file", "list servers only")
            .unwrap_err()
            .to_string(),
    ] {
        assert!(e.starts_with("/dev/zero:1:1: error[LIMIT_SIZE]: "), "{e}");
    }
}

#[test]
fn a_servers_file_with_a_server_named_twice_is_refused_at_the_second_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    std::fs::write(&path, "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"a\": {\"command\": \"y\"}\n}}\n")
        .unwrap();
    let e = read_json_file(&path, "a servers file", "list servers only").unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:3:3: error[JSON_DUPLICATE_KEY]", path.display())), "{e}");

    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge).unwrap().set_len(6 * 1024 * 1024).unwrap();
    let e = read_json_file(&huge, "a servers file", "list servers only").unwrap_err().to_string();
    assert!(
        e.contains(
            "error[LIMIT_SIZE]: a servers file is larger than the limit of 5242880 bytes (5 MB) (list servers only)"
        ),
        "{e}"
    );
}
