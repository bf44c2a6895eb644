//! Tauri's build step, plus the list of example blueprints the studio seeds its store
//! with on first start (embedded, so the binary needs no repository at run time).

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("..");
    let folder = root.join("workflows");
    println!("cargo:rerun-if-changed={}", folder.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.to_string_lossy().ends_with(".blueprint.json"));
    files.sort();
    let mut code =
        String::from("/// The example blueprints, by file name.\npub const EXAMPLES: &[(&str, &str)] = &[\n");
    for path in &files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let absolute = path.canonicalize().unwrap_or_else(|_| path.clone());
        let _ = writeln!(code, "    ({name:?}, include_str!({:?})),", absolute.display().to_string());
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("examples.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=could not write {}: {e}", out.display());
    }
    tauri_build::build();
}
