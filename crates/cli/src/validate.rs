//! `mcpflow validate`: compiler-style findings for blueprint files.

use crate::stdout::{out, outln};
use anyhow::Context as _;
use mcpflow_app::advice::Front;
use mcpflow_blueprint::limits::{BLUEPRINT_SIZE, CATALOG_FILE_SIZE, INPUTS_FILE_SIZE};
use mcpflow_blueprint::source::{ReadError, SizeLimit, heavier_than, parse_within, read_bounded};
use mcpflow_blueprint::template::SCALAR_OVERHEAD;
use mcpflow_blueprint::{Code, Diagnostic, JsonCatalog, Options, Position, ToolCatalog, check_many};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit codes shared with `mcpflow run`.
pub(crate) const EXIT_ERRORS: u8 = 1;
pub(crate) const EXIT_USAGE: u8 = 2;

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
    pub(crate) fn catalog(self) -> anyhow::Result<Option<Box<dyn ToolCatalog>>> {
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

#[allow(clippy::print_stderr)]
pub fn run(files: &[PathBuf], as_json: bool, tools: Tools, locked: bool) -> ExitCode {
    if locked && matches!(tools, Tools::None) {
        eprintln!(
            "error: --locked compares the live servers with the lock: pass --servers FILE (and --allow-server NAME)"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let catalog = match tools.catalog() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut documents = Vec::with_capacity(files.len());
    for f in files {
        match read_input(f, &BLUEPRINT_SIZE) {
            Ok(bytes) => documents.push(bytes),
            Err(message) => return unread(&message),
        }
    }
    let options = Options { catalog: catalog.as_deref(), workflows: None };
    let slices: Vec<&[u8]> = documents.iter().map(Vec::as_slice).collect();
    let mut reports = check_many(&slices, &options);
    if let (true, Some(catalog)) = (locked, catalog.as_deref()) {
        for ((file, bytes), report) in files.iter().zip(&documents).zip(&mut reports) {
            match crate::lock::locked_findings(file, bytes, report, catalog) {
                Ok(findings) => report.diagnostics.extend(findings),
                Err(message) => return unread(&message),
            }
            report.diagnostics.sort_by_key(|d| d.position);
        }
    }
    // A server that could not be checked because it is not approved: say how, here.
    for report in &mut reports {
        report.diagnostics =
            std::mem::take(&mut report.diagnostics).into_iter().map(|d| Front::Cli.diagnostic(d)).collect();
    }
    let (mut errors, mut warnings, mut notes) = (0, 0, 0);
    let mut out = Vec::new();
    for (file, report) in files.iter().zip(&reports) {
        errors += report.errors().count();
        warnings += report.warnings().count();
        notes += report.notes().count();
        if as_json {
            out.push(json!({ "file": file.display().to_string(), "diagnostics": report.diagnostics }));
        } else {
            for d in &report.diagnostics {
                if let Err(e) = out!("{}", render(&file.display().to_string(), d)) {
                    return crate::stdout::failed(&e);
                }
            }
        }
    }
    if as_json {
        if let Err(e) = outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default()) {
            return crate::stdout::failed(&e);
        }
    } else {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let files_word = if files.len() == 1 { "file" } else { "files" };
        let notes = if notes > 0 { format!(", {notes} note(s)") } else { String::new() };
        eprintln!("{} {files_word} checked: {errors} error(s), {warnings} warning(s){notes}", files.len());
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

/// Reads a file mcpflow was pointed at (`-`: standard input), never more than one byte
/// past `limit` (`/dev/zero` costs the limit, not all memory). Err is what to print:
/// a refusal rendered like a finding (`file:1:1: error[LIMIT_SIZE]: …` and its hint),
/// or why the file could not be read. Either way the exit code is 2.
pub(crate) fn read_input(path: &Path, limit: &SizeLimit<'_>) -> Result<Vec<u8>, String> {
    let shown = path.display().to_string();
    let result = if path == Path::new("-") {
        read_bounded(std::io::stdin().lock(), limit).map_err(|e| (e, "reading standard input"))
    } else {
        match std::fs::File::open(path) {
            Ok(file) => read_bounded(file, limit).map_err(|e| (e, "cannot read the file")),
            Err(e) => Err((ReadError::Io(e), "cannot open the file")),
        }
    };
    result.map_err(|(e, doing)| match e {
        ReadError::Io(e) => format!("{shown}: error: {doing}: {e}\n"),
        ReadError::Refused(d) => render(&shown, &d),
    })
}

/// [`read_input`], then the strict JSON reader (duplicate keys, UTF-8, nesting), its
/// refusals rendered the same way.
pub(crate) fn read_json_input(path: &Path, limit: &SizeLimit<'_>) -> Result<Value, String> {
    let bytes = read_input(path, limit)?;
    parse_within(&bytes, limit).map(|parsed| parsed.value).map_err(|d| render(&path.display().to_string(), &d))
}

/// An `--inputs` file: [`read_input`] within its size limit, then weighed before it is
/// parsed — its bytes plus [`SCALAR_OVERHEAD`] per JSON value, the least `limits.max_value_bytes` counts a value
/// — so a file of millions of tiny values is refused before it takes memory.
pub(crate) fn read_inputs_file(path: &Path, max_value_bytes: u64) -> Result<Value, String> {
    let bytes = read_input(path, &INPUTS_FILE_SIZE)?;
    let limit = usize::try_from(max_value_bytes).unwrap_or(usize::MAX);
    if heavier_than(&bytes, SCALAR_OVERHEAD as usize, limit) {
        let d = Diagnostic::new(
            Code::LimitSize,
            "",
            format!(
                "the inputs would be larger than {max_value_bytes} bytes (limits.max_value_bytes: their JSON plus at least {SCALAR_OVERHEAD} bytes for each value in it)"
            ),
        )
        .with_hint("pass fewer, larger values, or raise the blueprint's limits.max_value_bytes")
        .at(Position { line: 1, col: 1 });
        return Err(render(&path.display().to_string(), &d));
    }
    parse_within(&bytes, &INPUTS_FILE_SIZE)
        .map(|parsed| parsed.value)
        .map_err(|d| render(&path.display().to_string(), &d))
}

/// Prints what [`read_input`] could not read and gives the usage exit code.
#[allow(clippy::print_stderr)]
pub(crate) fn unread(message: &str) -> ExitCode {
    eprint!("{message}");
    ExitCode::from(EXIT_USAGE)
}

fn read_catalog(path: &Path) -> anyhow::Result<JsonCatalog> {
    let doc = read_json_input(path, &CATALOG_FILE_SIZE).map_err(|m| anyhow::anyhow!("{}", m.trim_end()))?;
    serde_json::from_value(doc).with_context(|| format!("{} is not a tool catalog", path.display()))
}
