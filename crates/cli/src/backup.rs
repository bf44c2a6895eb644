//! `mcpflow export [FILE]` / `mcpflow import FILE`: the whole store to and from one JSON
//! document (a backup). Importing is data only: it never starts a server.

use crate::app::{AppArgs, open_app};
use anyhow::Context as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

pub fn export(file: Option<&Path>) -> anyhow::Result<ExitCode> {
    let app = open_app(&AppArgs::default(), None)?;
    let doc = app.store().export()?;
    let text = serde_json::to_string_pretty(&doc)?;
    match file {
        None => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{text}").context("writing the export")?;
        }
        Some(path) => std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))?,
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stderr)]
pub fn import(file: &Path) -> anyhow::Result<ExitCode> {
    let text = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let doc: serde_json::Value =
        serde_json::from_slice(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    let app = open_app(&AppArgs::default(), None)?;
    let report = app.import(&doc).with_context(|| format!("importing {}", file.display()))?;
    eprintln!("{report}");
    Ok(ExitCode::SUCCESS)
}
