//! `mcpflow export [FILE]` / `mcpflow import FILE`: the whole store to and from one JSON
//! document (a backup). Importing is data only: it never starts a server.

use crate::app::{AppArgs, open_app};
use crate::validate::{render, unread};
use anyhow::Context as _;
use mcpflow_app::App;
use mcpflow_blueprint::source::ReadError;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// Exit code of an export that left out runs it cannot read: the backup holds everything
/// else (as a run's `partial` is 3).
const EXIT_INCOMPLETE: u8 = 3;

pub fn export(file: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (doc, skipped) =
        match crate::history::through_service("store/export", serde_json::json!({ "with_skipped": true }))? {
            Some(mut answer) if answer.get("mcpflow_store").is_none() => {
                (answer["doc"].take(), serde_json::from_value(answer["skipped"].take())?)
            }
            // A service from before `with_skipped` answers the document alone.
            Some(doc) => (doc, Vec::new()),
            None => {
                let backup = crate::app::open_reader()?.store().backup()?;
                (backup.doc, backup.skipped)
            }
        };
    let text = serde_json::to_string_pretty(&doc)?;
    match file {
        None => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{text}").context("writing the export")?;
        }
        Some(path) => std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))?,
    }
    if skipped.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    crate::history::warn_skipped(&skipped);
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "warning: the backup holds everything else; {} unreadable item(s) left out (exit {EXIT_INCOMPLETE})",
            skipped.len()
        );
    }
    Ok(ExitCode::from(EXIT_INCOMPLETE))
}

#[allow(clippy::print_stderr)]
pub fn import(file: &Path) -> anyhow::Result<ExitCode> {
    // Strict and bounded: a blueprint as `validate` reads it, a backup streamed up to
    // its own limit; a refusal is shown like a finding (`file:line:col: error[CODE]: …`).
    let opened = std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let doc = match mcpflow_app::backup::read_import(opened) {
        Ok(doc) => doc,
        Err(ReadError::Io(e)) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
        Err(ReadError::Refused(d)) => return Ok(unread(&render(&file.display().to_string(), &d))),
    };
    if crate::app::database().is_none() && mcpflow_service::endpoint::present(&mcpflow_app::home::data_dir()) {
        let size = serde_json::to_vec(&doc).map_or(0, |b| b.len() as u64);
        let limit = mcpflow_service::rpc::MAX_REQUEST - 1024;
        // Too large to send: refused only when a service does answer (else the store is ours).
        let answer = if size > limit {
            crate::history::through_service("runs/active", serde_json::json!({}))?
        } else {
            crate::history::through_service("store/import", serde_json::json!({ "doc": doc }))
                .with_context(|| format!("importing {} through the mcpflow service", file.display()))?
        };
        match answer {
            Some(_) if size > limit => anyhow::bail!(
                "{} is {size} bytes; while the mcpflow service (or the studio) holds the data folder, an import goes \
                 through it and may be at most {limit} bytes: close the studio or stop the service, then import again",
                file.display()
            ),
            Some(answer) => {
                eprintln!("{}", answer["report"].as_str().unwrap_or_default());
                return Ok(ExitCode::SUCCESS);
            }
            None => {}
        }
    }
    let app = open_app(&AppArgs::default(), None)?;
    let report = app.import(&doc).with_context(|| format!("importing {}", file.display()))?;
    eprintln!("{report}");
    Ok(ExitCode::SUCCESS)
}

/// `mcpflow export-blueprint ID`: the stored document as it is (to stdout, or `--out`
/// FILE), or with `--portable` a folder another machine runs it from (see
/// `mcpflow_app::portable`): never overwriting a file that is there.
#[allow(clippy::print_stderr)]
pub fn export_blueprint(id: &str, portable: bool, out: Option<&Path>, args: &AppArgs) -> anyhow::Result<ExitCode> {
    let app = open_app(args, None)?;
    if !portable {
        let doc = app.blueprint(id)?.json;
        let text = serde_json::to_string_pretty(&doc)? + "\n";
        match out {
            None => std::io::stdout().lock().write_all(text.as_bytes()).context("writing the blueprint")?,
            Some(path) => write_new(path, &text)?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let exported = list_allowed_then(&app, args, |app| app.portable_blueprint(id))??;
    let folder = out.map_or_else(|| Path::new(id).to_owned(), Path::to_owned);
    std::fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let mut files: Vec<(String, String)> = Vec::new();
    for (name, doc) in &exported.files {
        files.push((name.clone(), serde_json::to_string_pretty(doc)? + "\n"));
    }
    let readme = exported.readme(&files[0].0);
    files.push(("README.md".into(), readme));
    // Nothing is written when one would be overwritten.
    if let Some((name, _)) = files.iter().find(|(name, _)| folder.join(name).exists()) {
        anyhow::bail!(
            "{} exists; export into another folder (`--out DIR`) or move it away",
            folder.join(name).display()
        );
    }
    for (name, text) in &files {
        write_new(&folder.join(name), text)?;
    }
    eprintln!("wrote {} file(s) to {}:", files.len(), folder.display());
    for (name, _) in &files {
        eprintln!("  {name}");
    }
    for note in &exported.left_out {
        eprintln!("note: {note}");
    }
    if !exported.env.is_empty() {
        let names: Vec<&str> = exported.env.keys().map(String::as_str).collect();
        eprintln!("set before running: {}", names.join(", "));
    }
    eprintln!("see {} for the command that runs it", folder.join("README.md").display());
    Ok(ExitCode::SUCCESS)
}

/// Runs `work` after listing the servers the flags let start (`--allow-server`,
/// `--allow-all-servers`), so a portable export can lock the tools it uses; stops them
/// after. Without such flags nothing starts, and the export says why it has no lock.
#[allow(clippy::print_stderr)]
fn list_allowed_then<T>(app: &App, args: &AppArgs, work: impl FnOnce(&App) -> T) -> anyhow::Result<T> {
    let names: Vec<String> =
        if args.allow_all_servers { app.servers().into_iter().map(|s| s.name).collect() } else { args.allow.clone() };
    if names.is_empty() {
        return Ok(work(app));
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    Ok(runtime.block_on(async {
        for name in &names {
            if let Err(e) = app.test_server(name).await {
                eprintln!("note: could not list `{name}` to lock its tools: {e}");
            }
        }
        let out = work(app);
        app.shutdown().await;
        out
    }))
}

/// Writes `text` to a file that must not exist yet.
fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).open(path).with_context(|| {
            format!("cannot create {} (it may exist already; choose another place)", path.display())
        })?;
    file.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}
