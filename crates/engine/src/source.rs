//! Where sub-workflows and saved values come from. The CLI uses a folder (blueprints
//! found by their `id`, never by a path) and a file; the store implements both traits.

use mcpflow_blueprint::limits::{BLUEPRINT_SIZE, SAVED_FILE_SIZE};
use mcpflow_blueprint::source;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Finds blueprints by id, for `workflow` steps.
pub trait BlueprintSource: Send + Sync {
    /// The blueprint's text, or why it cannot be had.
    fn load(&self, id: &str) -> Result<Vec<u8>, String>;
}

/// How many `*.json` files a folder may hold for `workflow` steps to look through.
pub const MAX_FOLDER_BLUEPRINTS: usize = 1_000;

/// Blueprints in one folder, found by the `id` inside each file, never by a path.
///
/// Only the folder's own `*.json` files are looked at: no subfolders, no symlink whose
/// target lies outside the folder, nothing that is not a regular file, nothing larger
/// than [`BLUEPRINT_SIZE`], at most [`MAX_FOLDER_BLUEPRINTS`] files. Each is read
/// with the strict reader; the file whose document's `id` is the one asked for is the
/// blueprint, whatever its name. Two files with that id are an error naming both.
/// The folder is indexed once, at the first `workflow` step.
#[derive(Debug)]
pub struct FolderSource {
    dir: PathBuf,
    index: OnceLock<Result<FolderIndex, String>>,
}

/// Blueprint id → the files holding it, and what was passed over.
#[derive(Debug, Default)]
struct FolderIndex {
    ids: HashMap<String, Vec<PathBuf>>,
    /// `*.json` files skipped: unreadable, too large, not a blueprint document.
    skipped: usize,
}

impl FolderSource {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FolderSource { dir: dir.into(), index: OnceLock::new() }
    }

    fn index(&self) -> Result<&FolderIndex, String> {
        self.index.get_or_init(|| index_folder(&self.dir)).as_ref().map_err(Clone::clone)
    }
}

/// The id of a blueprint document: the top-level `"id"` string, read strictly.
fn document_id(bytes: &[u8]) -> Option<String> {
    let parsed = source::parse(bytes).ok()?;
    parsed.value.get("id")?.as_str().map(str::to_owned)
}

/// Reads a file of at most [`BLUEPRINT_SIZE`] (checked while reading); `None` past that.
fn read_bounded(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    match source::read_bounded(file, &BLUEPRINT_SIZE) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(source::ReadError::Refused(_)) => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// A folder entry that may be read: a regular file directly in `dir` (a symlink only
/// when its target is one too), named `*.json`.
fn admissible(dir: &Path, entry: &std::fs::DirEntry) -> Option<PathBuf> {
    let path = entry.path();
    if path.extension().is_none_or(|e| e != "json") {
        return None;
    }
    let kind = entry.file_type().ok()?;
    if kind.is_symlink() {
        let target = std::fs::canonicalize(&path).ok()?;
        (target.parent() == Some(dir) && target.is_file()).then_some(target)
    } else {
        kind.is_file().then_some(path)
    }
}

fn index_folder(dir: &Path) -> Result<FolderIndex, String> {
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("cannot read the folder {}: {e}", dir.display()))?;
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("cannot read the folder {}: {e}", dir.display()))?;
    let mut index = FolderIndex::default();
    let mut seen = 0usize;
    for entry in entries.flatten() {
        let Some(path) = admissible(&dir, &entry) else { continue };
        seen += 1;
        if seen > MAX_FOLDER_BLUEPRINTS {
            return Err(format!(
                "the folder {} holds more than {MAX_FOLDER_BLUEPRINTS} JSON files; keep the blueprints a \
                 `workflow` step calls in a folder of their own",
                dir.display()
            ));
        }
        match read_bounded(&path).ok().flatten().as_deref().and_then(document_id) {
            Some(id) => index.ids.entry(id).or_default().push(path),
            None => index.skipped += 1,
        }
    }
    Ok(index)
}

impl BlueprintSource for FolderSource {
    fn load(&self, id: &str) -> Result<Vec<u8>, String> {
        let index = self.index()?;
        let files = index.ids.get(id).map(Vec::as_slice).unwrap_or_default();
        match files {
            [] => {
                let skipped = match index.skipped {
                    0 => String::new(),
                    n => format!(" ({n} JSON file(s) there were not read: unreadable, over 5 MB or not JSON)"),
                };
                Err(format!(
                    "no file in {} holds a blueprint with `\"id\": \"{id}\"`{skipped}; blueprints are found by \
                     their id, in the folder of the blueprint that calls them",
                    self.dir.display()
                ))
            }
            [path] => {
                // Read again: the file may have changed since the folder was indexed.
                let bytes = read_bounded(path)?.ok_or_else(|| format!("{} is larger than 5 MB", path.display()))?;
                match document_id(&bytes) {
                    Some(found) if found == id => Ok(bytes),
                    _ => Err(format!("{} no longer holds blueprint `{id}`", path.display())),
                }
            }
            [first, second, ..] => Err(format!(
                "two files hold blueprint `{id}`: {} and {}; give one of them another id",
                first.display(),
                second.display()
            )),
        }
    }
}

/// Values a blueprint's steps `save` for its later runs.
pub trait SavedValues: Send + Sync {
    fn load(&self, blueprint: &str) -> Result<Value, String>;
    fn save(&self, blueprint: &str, name: &str, value: &Value) -> Result<(), String>;
}

/// Saved values in one JSON file per blueprint: `<dir>/<blueprint>.saved.json`.
#[derive(Debug)]
pub struct FileSaved {
    dir: PathBuf,
    lock: Mutex<()>,
}

impl FileSaved {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileSaved { dir: dir.into(), lock: Mutex::new(()) }
    }

    fn path(&self, blueprint: &str) -> PathBuf {
        self.dir.join(format!("{blueprint}.saved.json"))
    }
}

/// The saved values of one blueprint, read within [`SAVED_FILE_SIZE`] (mcpflow writes
/// these files itself, so they are parsed as written, without the blueprint's depth limit).
fn read_map(path: &Path) -> Result<Map<String, Value>, String> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let bytes = source::read_bounded(file, &SAVED_FILE_SIZE).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice::<Map<String, Value>>(&bytes)
        .map_err(|e| format!("{} is not a JSON object of saved values: {e}", path.display()))
}

impl SavedValues for FileSaved {
    fn load(&self, blueprint: &str) -> Result<Value, String> {
        read_map(&self.path(blueprint)).map(Value::Object)
    }

    fn save(&self, blueprint: &str, name: &str, value: &Value) -> Result<(), String> {
        let _guard = self.lock.lock().map_err(|_| "saved values lock poisoned".to_owned())?;
        let path = self.path(blueprint);
        let mut map = read_map(&path)?;
        map.insert(name.to_owned(), value.clone());
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        // Write then rename, so a crash never leaves half a file.
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(&map).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}
