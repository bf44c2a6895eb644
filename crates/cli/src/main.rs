//! `mcpflow`: validate, run and serve MCP workflow blueprints. Each subcommand decodes
//! its arguments, calls the library and maps the outcome to output and an exit code.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod progress;
mod run;
mod validate;

#[derive(Debug, Parser)]
#[command(name = "mcpflow", version, about = "Design, validate and run MCP workflow blueprints", long_about = None)]
#[command(propagate_version = true, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check blueprint files: errors block running, warnings do not.
    ///
    /// Prints `file:line:col: level[CODE]: message` and a hint per finding. Exits 1 when
    /// any file has errors, 0 when there are only warnings, 2 when a file cannot be read.
    Validate {
        /// Blueprint files (`-` reads standard input).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print the findings as JSON (one object per file) instead of text.
        #[arg(long)]
        json: bool,
        /// A JSON tool catalog (`{"servers": {name: {"tools": [...]}}}`) for the tool warnings.
        #[arg(long, value_name = "FILE")]
        catalog: Option<PathBuf>,
    },
    /// Run a blueprint against its MCP servers, headless.
    ///
    /// Exit codes: 0 succeeded, 1 failed, 2 invalid blueprint or usage, 3 partial
    /// (steps with `on_error: continue` failed), 130 cancelled (Ctrl-C).
    Run(run::RunArgs),
    /// Print the JSON Schema of the blueprint format.
    Schema,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate { files, json, catalog } => validate::run(&files, json, catalog.as_deref()),
        Command::Run(args) => run::run(args),
        Command::Schema => {
            #[allow(clippy::print_stdout)]
            {
                print!("{}", mcpflow_blueprint::schema::blueprint_schema_text());
            }
            ExitCode::SUCCESS
        }
    }
}
