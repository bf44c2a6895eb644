//! Import into the store: a single blueprint file, or a whole-store backup made by
//! `mcpflow export`. Importing is data only — it never starts a server — and it does
//! not import consents: approving a command stays a decision made on this machine.

use crate::app::{App, Change};
use crate::error::{AppError, Result};
use mcpflow_blueprint::Code;
use mcpflow_blueprint::limits::{BACKUP_SIZE, BLUEPRINT_SIZE};
use mcpflow_blueprint::source::{ReadError, SizeLimit, parse_within, read_json_streamed};
use serde_json::Value;
use std::fmt;
use std::io::Read;

/// The largest store backup [`read_import`] reads: [`BACKUP_SIZE`] (1 GB), or
/// `MCPFLOW_MAX_BACKUP_BYTES` when set to a number of bytes.
pub fn backup_limit() -> SizeLimit<'static> {
    let bytes = std::env::var("MCPFLOW_MAX_BACKUP_BYTES").ok().and_then(|v| v.trim().parse().ok());
    SizeLimit { bytes: bytes.unwrap_or(BACKUP_SIZE.bytes), ..BACKUP_SIZE }
}

/// Reads a document to import — a blueprint or a store backup — with the strict reader
/// (a duplicate key is `JSON_DUPLICATE_KEY`, never the last key winning) and within its
/// size, checked while reading.
///
/// The first 5 MB decide: a document that ends within them is read exactly as
/// `mcpflow validate` reads a blueprint (the same positions). A larger one can only be a
/// backup; it is parsed as it is read ([`read_json_streamed`]: no copy of the text),
/// up to [`backup_limit`]. A larger document that turns out not to be a backup is
/// refused as a blueprint over 5 MB.
pub fn read_import(mut read: impl Read) -> Result<Value, ReadError> {
    let mut head = Vec::new();
    (&mut read).take(BLUEPRINT_SIZE.bytes as u64 + 1).read_to_end(&mut head)?;
    let limit = backup_limit();
    let small = head.len() <= BLUEPRINT_SIZE.bytes;
    let mut refused = None;
    if small {
        match parse_within(&head, &BLUEPRINT_SIZE) {
            Ok(parsed) => return Ok(parsed.value),
            // A backup nests its blueprints and run outputs a few levels deeper than a
            // blueprint may: read it again the backup's way, below.
            Err(d) if d.code == Code::LimitNesting => refused = Some(d),
            Err(d) => return Err(d.into()),
        }
    }
    let value = read_json_streamed(std::io::Cursor::new(head).chain(read), &limit)?;
    if value.get("mcpflow_store").is_none() {
        return Err(refused.unwrap_or_else(|| BLUEPRINT_SIZE.exceeded()).into());
    }
    Ok(value)
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    /// One blueprint saved as a new revision (with its warnings).
    Blueprint { id: String, rev: u32, warnings: usize },
    /// A store backup merged in.
    Store { summary: String, consents_ignored: usize },
}

impl fmt::Display for Imported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Imported::Blueprint { id, rev, warnings } => {
                write!(f, "imported blueprint `{id}` as revision {rev} ({warnings} warning(s))")
            }
            Imported::Store { summary, consents_ignored } => {
                write!(f, "imported a store backup: {summary}")?;
                if *consents_ignored > 0 {
                    write!(f, "; {consents_ignored} server consent(s) were not imported: approve servers again here")?;
                }
                Ok(())
            }
        }
    }
}

impl App {
    /// Imports a blueprint (`"blueprint": 1`) or a store backup (`"mcpflow_store": 1`).
    pub fn import(&self, doc: &Value) -> Result<Imported> {
        if doc.get("mcpflow_store").is_some() {
            // Consents stay behind (the store's default): approving stays a local decision.
            let report = self.store().import(doc)?;
            self.reload_servers()?;
            self.changed(Change::Blueprints);
            let c = |name: &str, n: mcpflow_store::Counts| format!("{} {name} added, {} skipped", n.added, n.skipped);
            let mut summary = [
                c("blueprints", report.blueprints),
                c("revisions", report.revisions),
                c("runs", report.runs),
                c("saved values", report.saved),
                c("servers", report.servers),
                c("schedules", report.schedules),
            ]
            .join("; ");
            if !report.conflicts.is_empty() {
                summary.push_str(&format!("; kept this store's version of {}", report.conflicts.join(", ")));
            }
            return Ok(Imported::Store { summary, consents_ignored: report.consents.skipped });
        }
        if doc.get("blueprint").is_some() {
            let saved = self.save_blueprint(doc)?;
            let warnings = saved.warnings.len();
            return Ok(Imported::Blueprint { id: saved.meta.id, rev: saved.meta.rev, warnings });
        }
        Err(AppError::BadRequest(
            "this is neither a blueprint (`\"blueprint\": 1`) nor a store backup (`\"mcpflow_store\": 1`)".into(),
        ))
    }
}
