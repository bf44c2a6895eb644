//! `mcpflow validate`: compiler-style findings for blueprint files.

use anyhow::Context as _;
use mcpflow_blueprint::limits::MAX_BLUEPRINT_BYTES;
use mcpflow_blueprint::{Diagnostic, JsonCatalog, Options, ToolCatalog, check_many};
use serde_json::json;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit codes shared with `mcpflow run`.
const EXIT_ERRORS: u8 = 1;
const EXIT_USAGE: u8 = 2;

/// Where the tool warnings get the servers' tools from.
pub enum Tools {
    None,
    /// `--catalog FILE`.
    File(PathBuf),
    /// `--servers FILE...`: listed from the servers that may start.
    Live {
        servers: Vec<PathBuf>,
        allow: Vec<String>,
        allow_all: bool,
    },
}

impl Tools {
    fn catalog(self) -> anyhow::Result<Option<Box<dyn ToolCatalog>>> {
        Ok(match self {
            Tools::None => None,
            Tools::File(path) => Some(Box::new(read_catalog(&path)?)),
            Tools::Live { servers, allow, allow_all } => {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()
                    .context("cannot start the async runtime")?;
                let catalog = runtime.block_on(mcpflow_app::headless::live_catalog(&servers, &allow, allow_all))?;
                Some(Box::new(catalog))
            }
        })
    }
}

#[allow(clippy::print_stdout, clippy::print_stderr)]
pub fn run(files: &[PathBuf], as_json: bool, tools: Tools) -> ExitCode {
    let catalog = match tools.catalog() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut documents = Vec::with_capacity(files.len());
    for f in files {
        match read_limited(f) {
            Ok(bytes) => documents.push(bytes),
            Err(e) => {
                eprintln!("{}: error: {e:#}", f.display());
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    let options = Options { catalog: catalog.as_deref(), workflows: None };
    let slices: Vec<&[u8]> = documents.iter().map(Vec::as_slice).collect();
    let reports = check_many(&slices, &options);
    let (mut errors, mut warnings) = (0, 0);
    let mut out = Vec::new();
    for (file, report) in files.iter().zip(&reports) {
        errors += report.errors().count();
        warnings += report.warnings().count();
        if as_json {
            out.push(json!({ "file": file.display().to_string(), "diagnostics": report.diagnostics }));
        } else {
            for d in &report.diagnostics {
                print!("{}", render(&file.display().to_string(), d));
            }
        }
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let files_word = if files.len() == 1 { "file" } else { "files" };
        eprintln!("{} {files_word} checked: {errors} error(s), {warnings} warning(s)", files.len());
    }
    if errors > 0 { ExitCode::from(EXIT_ERRORS) } else { ExitCode::SUCCESS }
}

/// `file:line:col: level[CODE]: message` plus an indented hint line.
pub fn render(file: &str, d: &Diagnostic) -> String {
    let at = d.position.map(|p| format!("{file}:{}:{}", p.line, p.col)).unwrap_or_else(|| file.to_owned());
    let mut s = format!("{at}: {}[{}]: {}", d.level, d.code, d.message);
    if !d.pointer.is_empty() {
        s.push_str(&format!(" (at {})", d.pointer));
    }
    s.push('\n');
    if let Some(h) = &d.hint {
        s.push_str(&format!("  = hint: {h}\n"));
    }
    s
}

/// Reads a file, but never more than one byte past the size limit: a 100 MB file is
/// rejected by the validator's size check without being read whole.
fn read_limited(path: &Path) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let limit = MAX_BLUEPRINT_BYTES as u64 + 1;
    if path == Path::new("-") {
        std::io::stdin().take(limit).read_to_end(&mut buf).context("reading standard input")?;
    } else {
        let file = std::fs::File::open(path).context("cannot open the file")?;
        file.take(limit).read_to_end(&mut buf).context("cannot read the file")?;
    }
    Ok(buf)
}

fn read_catalog(path: &Path) -> anyhow::Result<JsonCatalog> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the catalog {}", path.display()))?;
    JsonCatalog::from_json(&text).with_context(|| format!("{} is not a tool catalog", path.display()))
}
