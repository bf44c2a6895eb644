//! `mcpflow lock FILE`: writes `FILE.lock.json` beside a blueprint, the schemas of the
//! tools and prompts it uses as the live servers list them; and the `--locked` check of
//! `validate` and `run`, which compares the live servers with that lock.

use crate::stdout::out;
use crate::validate::{EXIT_ERRORS, EXIT_USAGE, Tools, read_input, read_json_input, render, unread};
use mcpflow_blueprint::limits::BLUEPRINT_SIZE;
use mcpflow_blueprint::lock::{Lock, lock_path};
use mcpflow_blueprint::source::parse;
use mcpflow_blueprint::{Diagnostic, Options, Report, ToolCatalog, check_bytes};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `mcpflow lock FILE [--update]`.
#[allow(clippy::print_stderr)]
pub fn run(file: &Path, tools: Tools, update: bool) -> ExitCode {
    let path = lock_path(file);
    if file == Path::new("-") {
        eprintln!("error: a lock is written beside its blueprint: give the blueprint's file, not `-`");
        return ExitCode::from(EXIT_USAGE);
    }
    if path.exists() && !update {
        eprintln!(
            "error: {} exists already\n  = hint: `mcpflow lock --update {}` (with the same --servers) rewrites it from the live servers",
            path.display(),
            file.display()
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let catalog = match tools.catalog() {
        Ok(Some(catalog)) => catalog,
        Ok(None) => {
            eprintln!("error: a lock is taken from the live servers: pass --servers FILE (and --allow-server NAME)");
            return ExitCode::from(EXIT_USAGE);
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let bytes = match read_input(file, &BLUEPRINT_SIZE) {
        Ok(bytes) => bytes,
        Err(message) => return unread(&message),
    };
    let report = check_bytes(&bytes, &Options { catalog: Some(catalog.as_ref()), workflows: None });
    let (Some(blueprint), Some(plan)) = (&report.blueprint, &report.plan) else {
        for d in report.errors() {
            if let Err(e) = out!("{}", render(&file.display().to_string(), d)) {
                return crate::stdout::failed(&e);
            }
        }
        eprintln!("error: {} has errors; fix them, then lock it", file.display());
        return ExitCode::from(EXIT_ERRORS);
    };
    let lock = match Lock::build(&blueprint.id, plan, catalog.as_ref()) {
        Ok(lock) => lock,
        Err(problems) => {
            eprintln!("error: cannot lock {}:", file.display());
            for problem in problems {
                eprintln!("  {problem}");
            }
            eprintln!(
                "  = hint: let the servers start (--allow-server NAME) and check the names with `mcpflow validate`"
            );
            return ExitCode::from(EXIT_ERRORS);
        }
    };
    if let Err(e) = std::fs::write(&path, lock.to_text()) {
        eprintln!("error: cannot write {}: {e}", path.display());
        return ExitCode::from(EXIT_USAGE);
    }
    let tools: usize = lock.servers.values().map(|s| s.tools.len() + s.prompts.len()).sum();
    eprintln!("locked {tools} tool(s) and prompt(s) of {} server(s) in {}", lock.servers.len(), path.display());
    ExitCode::SUCCESS
}

/// The `--locked` findings for a checked blueprint file, with positions: how the servers
/// of `catalog` differ from the lock beside `file`. Err: what to print (no lock, or an
/// unreadable one). A blueprint with errors has no plan, and nothing to compare.
pub(crate) fn locked_findings(
    file: &Path,
    bytes: &[u8],
    report: &mut Report,
    catalog: &dyn ToolCatalog,
) -> Result<Vec<Diagnostic>, String> {
    let Some(plan) = &report.plan else { return Ok(Vec::new()) };
    let path = lock_path(file);
    if !path.exists() {
        return Err(format!(
            "{}: error: no lock file {}\n  = hint: run `mcpflow lock {}` with the same --servers first\n",
            file.display(),
            path.display(),
            file.display()
        ));
    }
    let value = read_json_input(&path, &BLUEPRINT_SIZE)?;
    let lock = Lock::from_value(value).map_err(|m| {
        format!(
            "{}: error: {m}\n  = hint: write it again with `mcpflow lock --update {}`\n",
            path.display(),
            file.display()
        )
    })?;
    let mut findings = lock.compare(plan, catalog);
    if let (Ok(parsed), Some(map)) = (parse(bytes), report.source.as_mut()) {
        map.locate(&parsed.value, &mut findings);
    }
    Ok(findings)
}

/// `mcpflow run --locked`: before anything runs, the servers of the `--servers` files
/// are listed and compared with the lock. Some: the exit code when the run must not start
/// (no lock, a breaking change: 2, as for an invalid blueprint); every finding is printed.
/// The servers the blueprint declares are listed too (they win, as in the run).
#[allow(clippy::print_stderr)]
pub(crate) async fn check_before_run(
    file: &Path,
    bytes: &[u8],
    servers: &[PathBuf],
    allow: &[String],
    allow_all: bool,
) -> anyhow::Result<Option<ExitCode>> {
    use anyhow::Context as _;
    let declared = check_bytes(bytes, &Options::default()).blueprint;
    let catalog = mcpflow_app::headless::live_catalog_with(servers, declared.as_ref(), allow, allow_all)
        .await
        .context("listing the servers' tools to compare them with the lock")?;
    let mut report = check_bytes(bytes, &Options { catalog: Some(&catalog), workflows: None });
    let findings = match locked_findings(file, bytes, &mut report, &catalog) {
        Ok(findings) => findings,
        Err(message) => return Ok(Some(unread(&message))),
    };
    let shown = file.display().to_string();
    for d in &findings {
        eprint!("{}", render(&shown, d));
    }
    if findings.iter().any(Diagnostic::is_error) {
        eprintln!("error: the servers changed under {shown} since it was locked; nothing was run");
        return Ok(Some(ExitCode::from(EXIT_USAGE)));
    }
    Ok(None)
}
