//! Where sub-workflows and saved values come from. The CLI uses a folder and a file;
//! the store implements both traits later.

use mcpflow_blueprint::{Options, check_bytes};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Finds blueprints by id, for `workflow` steps.
pub trait BlueprintSource: Send + Sync {
    /// The blueprint's text, or why it cannot be had.
    fn load(&self, id: &str) -> Result<Vec<u8>, String>;
}

/// Blueprints in one folder: `<id>.blueprint.json`, else any `*.json` whose `id` matches.
#[derive(Debug, Clone)]
pub struct FolderSource {
    dir: PathBuf,
}

impl FolderSource {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FolderSource { dir: dir.into() }
    }
}

impl BlueprintSource for FolderSource {
    fn load(&self, id: &str) -> Result<Vec<u8>, String> {
        let direct = self.dir.join(format!("{id}.blueprint.json"));
        if let Ok(bytes) = std::fs::read(&direct) {
            return Ok(bytes);
        }
        let entries = std::fs::read_dir(&self.dir).map_err(|e| format!("cannot read {}: {e}", self.dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json")
                && let Ok(bytes) = std::fs::read(&path)
                && let Some(bp) = check_bytes(&bytes, &Options::default()).blueprint
                && bp.id == id
            {
                return Ok(bytes);
            }
        }
        Err(format!("no blueprint `{id}` in {}", self.dir.display()))
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

fn read_map(path: &Path) -> Result<Map<String, Value>, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice::<Map<String, Value>>(&bytes)
            .map_err(|e| format!("{} is not a JSON object of saved values: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
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
