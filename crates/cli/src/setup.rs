//! `mcpflow setup HOST [--print] [--config FILE] [--name NAME]`: adds the entry that
//! launches `mcpflow serve` to an MCP host's configuration (see `mcpflow_app::setup`).

use crate::stdout::outln;
use anyhow::{Context as _, anyhow};
use clap::Args;
use mcpflow_app::setup::{Added, Host, add_entry};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The MCP host: `claude-desktop`, `cursor` or `vscode`.
    #[arg(value_name = "HOST", value_parser = ["claude-desktop", "cursor", "vscode"])]
    host: String,
    /// Show the entry and the file it belongs in; change nothing.
    #[arg(long)]
    print: bool,
    /// The host's configuration file (default: where the host reads it on this platform).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The server's name in the host.
    #[arg(long, default_value = "mcpflow")]
    name: String,
}

#[allow(clippy::print_stderr)]
pub fn run(args: &SetupArgs) -> anyhow::Result<ExitCode> {
    let host = Host::parse(&args.host).ok_or_else(|| anyhow!("unknown host `{}`", args.host))?;
    let file = match &args.config {
        Some(file) => file.clone(),
        None => host.default_config_file().ok_or_else(|| {
            anyhow!("no home folder to find {}'s configuration in; give it with --config FILE", host.name())
        })?,
    };
    let binary = std::env::current_exe().context("cannot tell where this mcpflow binary is")?;
    // The data folder the studio and the CLI use now, when it was chosen explicitly.
    let data_folder = std::env::var_os("MCPFLOW_HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let data_folder = data_folder.map(|f| std::path::absolute(&f).unwrap_or(f));
    let entry = host.entry(&binary, data_folder.as_deref());
    if args.print {
        outln!("{}", serde_json::to_string_pretty(&host.snippet(&args.name, &entry))?)?;
        eprintln!("belongs in {}", file.display());
        return Ok(ExitCode::SUCCESS);
    }
    match add_entry(host, &file, &args.name, &entry) {
        Ok(Added::Created) => eprintln!("created {} with the `{}` server", file.display(), args.name),
        Ok(Added::Added) => eprintln!("added the `{}` server to {}", args.name, file.display()),
        Ok(Added::Replaced(old)) => eprintln!(
            "replaced the `{}` server in {} (it was {})",
            args.name,
            file.display(),
            serde_json::to_string(&old).unwrap_or_default()
        ),
        Ok(Added::Unchanged) => eprintln!("{} already has this `{}` server", file.display(), args.name),
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(ExitCode::from(1));
        }
    }
    eprintln!("restart {} to load it", host.name());
    Ok(ExitCode::SUCCESS)
}
