//! `mcpflow auth login SERVER` (sign in through the browser), `mcpflow auth status`
//! (who is signed in where, until when) and `mcpflow auth logout SERVER`. The servers
//! come from `--servers` files, or with `--store` also from the data folder's store.
//! Tokens go to the vault (`auth/tokens.json` in the data folder, user-only), which is
//! the one record of who holds a login, and are never printed. `logout` asks the
//! authorization server to revoke them and says whether it did.

use crate::app::{AppArgs, open_app};
use crate::stdout::outln;
use clap::{Args, Subcommand};
use mcpflow_app::advice::Front;
use mcpflow_app::auth::{self, AuthStatus, LoginOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct AuthArgs {
    #[command(subcommand)]
    action: Action,
    /// An `mcpServers` JSON file, as Claude Desktop and Cursor write them (repeatable).
    #[arg(long = "servers", value_name = "FILE", global = true)]
    servers: Vec<PathBuf>,
    /// Include the servers configured in the store (the data folder).
    #[arg(long, global = true)]
    store: bool,
    /// A blueprint whose own `servers` are signed in to (as `mcpflow run FILE` reaches
    /// them; they win over the `--servers` files).
    #[arg(long, value_name = "FILE", global = true, conflicts_with = "store")]
    blueprint: Option<PathBuf>,
    /// Let mcpflow reach this HTTP server a blueprint declares, when it sends
    /// `${env:…}` values or leaves this machine (repeatable), as for `run`.
    #[arg(long = "allow-server", value_name = "NAME", global = true)]
    allow: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Sign in to an HTTP server: opens the browser (`$BROWSER`, else the system's) on
    /// the server's authorization page and waits for it to come back to a loopback
    /// address. Servers whose `oauth.grant` is `client_credentials` sign in without one.
    Login {
        #[arg(value_name = "SERVER")]
        server: String,
        /// How long to wait for the browser (seconds, or e.g. `2m`).
        #[arg(long, value_name = "DURATION", value_parser = parse_timeout, default_value = "300")]
        timeout: Duration,
    },
    /// Every HTTP server: signed in or not, as whom, with which scopes, until when.
    Status {
        /// One JSON object per server, one per line.
        #[arg(long)]
        json: bool,
    },
    /// Forget the login of a server: its tokens leave the vault, and the authorization
    /// server is asked to revoke them (when it offers that; a few seconds at most).
    Logout {
        #[arg(value_name = "SERVER")]
        server: String,
    },
}

/// `30` (seconds) or a humantime duration (`30s`, `2m`).
fn parse_timeout(text: &str) -> Result<Duration, String> {
    match text.parse::<u64>() {
        Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs)),
        Ok(_) => Err("the timeout must be at least 1 second".to_owned()),
        Err(_) => humantime::parse_duration(text).map_err(|e| e.to_string()),
    }
}

pub async fn run(args: AuthArgs) -> anyhow::Result<ExitCode> {
    let app = if args.store {
        Some(open_app(&AppArgs { servers: args.servers.clone(), ..AppArgs::default() }, None)?)
    } else {
        None
    };
    let home = mcpflow_app::home::data_dir();
    let authenticator = mcpflow_app::authenticator::authenticator(&home, Front::Cli);
    let (configs, approvals) = match &app {
        Some(app) => app.server_set(),
        None => {
            let blueprint = match &args.blueprint {
                Some(file) => Some(
                    crate::validate::read_input(file, &mcpflow_blueprint::limits::BLUEPRINT_SIZE)
                        .map_err(|m| anyhow::anyhow!("{}", m.trim_end()))?,
                ),
                None => None,
            };
            auth::login_servers(&args.servers, blueprint.as_deref(), &args.allow).map_err(|e| match e {
                mcpflow_app::headless::HeadlessError::Invalid(_) => {
                    anyhow::anyhow!("the blueprint has errors; `mcpflow validate` shows them")
                }
                e => anyhow::anyhow!("{e}"),
            })?
        }
    };
    let outcome = match args.action {
        Action::Login { server, timeout } => {
            if auth::opens_browser(&configs, &server) {
                say(&format!(
                    "Opening the browser to sign in to `{server}` (waiting up to {} s; set `$BROWSER` to choose the \
                     browser)…",
                    timeout.as_secs()
                ));
            }
            let options = LoginOptions { timeout, ..LoginOptions::default() };
            let status = match &app {
                Some(app) => app.auth_login(None, &server, options).await,
                None => auth::login(&authenticator, &configs, &approvals, &server, options).await,
            };
            status.map(|s| {
                say(&format!("signed in to `{}`: {}", s.server, describe(&s)));
            })
        }
        Action::Status { json } => {
            let list = match &app {
                Some(app) => app.auth_status().await,
                None => auth::status(&authenticator, &configs),
            };
            list.and_then(|list| {
                // Where the tokens are: the OS keyring, or the file (never the tokens).
                let store = authenticator.vault().describe_store()?;
                match print_status(&list, &store, json) {
                    // The reader went away (`| head`): it has what it wanted.
                    Err(e) if crate::stdout::closed_in(&e) => Ok(()),
                    printed => printed.map_err(|e| mcpflow_app::AppError::BadRequest(e.to_string())),
                }
            })
        }
        Action::Logout { server } => {
            let told = match &app {
                Some(app) => app.auth_logout(&server).await,
                None => auth::logout(&authenticator, &configs, &server).await,
            };
            told.map(|told| say(&auth::describe_logout(&server, &told)))
        }
    };
    if let Some(app) = &app {
        app.shutdown().await;
    }
    match outcome {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("error[{}]: {e}", e.code());
            }
            Ok(ExitCode::from(1))
        }
    }
}

#[allow(clippy::print_stderr)]
fn say(text: &str) {
    eprintln!("{text}");
}

/// `as me@x, scopes mcp:tools, token expires 2026-11-25 05:00 UTC (refreshable)`.
fn describe(s: &AuthStatus) -> String {
    if !s.signed_in {
        return format!("not signed in (`mcpflow auth login {}`)", s.server);
    }
    let mut parts = vec![format!("signed in ({})", s.grant.as_deref().unwrap_or("oauth"))];
    if let Some(account) = &s.account {
        parts.push(format!("as {account}"));
    }
    if !s.scopes.is_empty() {
        parts.push(format!("scopes {}", s.scopes.join(" ")));
    }
    if let Some(at) = s.expires_at_ms.and_then(chrono::DateTime::from_timestamp_millis) {
        parts.push(format!("token expires {}", at.format("%Y-%m-%d %H:%M:%S UTC")));
    }
    if s.refreshable {
        parts.push("refreshable".to_owned());
    }
    parts.join(", ")
}

fn print_status(list: &[AuthStatus], store: &str, json: bool) -> anyhow::Result<()> {
    if json {
        for s in list {
            outln!("{}", serde_json::to_string(s)?)?;
        }
        return Ok(());
    }
    if list.is_empty() {
        outln!("no HTTP servers configured: give `--servers FILE` (an `mcpServers` file) or `--store`")?;
    }
    for s in list {
        outln!("{} {}", s.server, s.url)?;
        outln!("  {}", describe(s))?;
    }
    outln!("tokens: {store}")?;
    Ok(())
}
