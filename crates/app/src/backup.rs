//! Import into the store: a single blueprint file, or a whole-store backup made by
//! `mcpflow export`. Importing is data only — it never starts a server — and it does
//! not import consents: approving a command stays a decision made on this machine.

use crate::app::{App, Change};
use crate::error::{AppError, Result};
use serde_json::Value;
use std::fmt;

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
