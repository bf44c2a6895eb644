//! `mcpflow export [FILE]` / `mcpflow import FILE`: the whole store to and from one JSON
//! document (a backup). Importing is data only: it never starts a server.

use crate::app::{AppArgs, open_app};
use crate::validate::{render, unread};
use anyhow::Context as _;
use mcpflow_blueprint::source::ReadError;
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
    // Strict and bounded: a blueprint as `validate` reads it, a backup streamed up to
    // its own limit; a refusal is shown like a finding (`file:line:col: error[CODE]: …`).
    let opened = std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let doc = match mcpflow_app::backup::read_import(opened) {
        Ok(doc) => doc,
        Err(ReadError::Io(e)) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
        Err(ReadError::Refused(d)) => return Ok(unread(&render(&file.display().to_string(), &d))),
    };
    let app = open_app(&AppArgs::default(), None)?;
    let report = app.import(&doc).with_context(|| format!("importing {}", file.display()))?;
    eprintln!("{report}");
    Ok(ExitCode::SUCCESS)
}
