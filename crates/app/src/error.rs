//! The error of the application's use cases. Every variant has a stable code that the
//! CLI, the desktop and `mcpflow serve` show as is.

use mcpflow_blueprint::Diagnostic;

pub type Result<T, E = AppError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The blueprint has errors; they are all in the list.
    #[error("the blueprint has {} error(s): {}", .0.iter().filter(|d| d.is_error()).count(), first_error(.0))]
    Invalid(Vec<Diagnostic>),
    #[error("no {what} `{id}`{}", hint_for(.what))]
    NotFound { what: &'static str, id: String },
    #[error("{active} runs are in flight, the most this mcpflow allows; try again when one finishes")]
    Busy { active: usize },
    #[error("workflow `{id}` reaches itself: {chain}")]
    Recursion { id: String, chain: String },
    #[error("runs nest deeper than {limit} ({chain})")]
    Depth { limit: usize, chain: String },
    #[error("{}", .0.join("; "))]
    Inputs(Vec<String>),
    #[error("{0}")]
    BadRequest(String),
    /// An answer names a question that is not open (answered already, or its run ended).
    #[error("{0}")]
    QuestionNotOpen(String),
    #[error("run `{0}` is not in flight (it finished or never started)")]
    NotRunning(String),
    #[error(transparent)]
    Servers(#[from] mcpflow_mcp::Error),
    #[error("the store: {0}")]
    Store(String),
    /// A blueprint sent to `mcpflow serve` declares a server that would read the
    /// environment of mcpflow (`${env:NAME}`), and the operator did not allow it.
    #[error(
        "the blueprint's server `{server}` uses the environment variable(s) {} through `${{env:…}}`; blueprints sent \
         to `mcpflow serve` may not read mcpflow's environment. Configure that server on the mcpflow side (`--servers` \
         or the studio's Servers panel) and leave it out of the blueprint, or start `mcpflow serve` with \
         `--allow-blueprint-env`",
        names.join(", ")
    )]
    BlueprintEnv { server: String, names: Vec<String> },
    /// The data folder is not the user's alone (`DATA_FOLDER_NOT_PRIVATE`).
    #[error(transparent)]
    DataFolder(#[from] crate::home::NotPrivate),
}

/// A configuration or sign-in error is a servers error, as the pool reports it.
impl From<mcpflow_config::Error> for AppError {
    fn from(error: mcpflow_config::Error) -> Self {
        AppError::Servers(error.into())
    }
}

impl From<mcpflow_auth::Error> for AppError {
    fn from(error: mcpflow_auth::Error) -> Self {
        AppError::Servers(error.into())
    }
}

fn first_error(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .find(|d| d.is_error())
        .map(|d| format!("{} at {}: {}", d.code, if d.pointer.is_empty() { "/" } else { &d.pointer }, d.message))
        .unwrap_or_default()
}

fn hint_for(what: &str) -> &'static str {
    match what {
        "blueprint" => "; `list_workflows` (or `mcpflow list`) shows the stored ones",
        "run" => "; `mcpflow runs` lists the recorded runs",
        "server" => "; `list_servers` shows the configured ones",
        _ => "",
    }
}

impl AppError {
    /// A stable code for scripts and agents.
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Invalid(_) => "BLUEPRINT_INVALID",
            AppError::NotFound { what: "run", .. } => "RUN_NOT_FOUND",
            AppError::NotFound { what: "server", .. } => "SERVER_NOT_FOUND",
            AppError::NotFound { .. } => "BLUEPRINT_NOT_FOUND",
            AppError::Busy { .. } => "RUNS_BUSY",
            AppError::Recursion { .. } => "WORKFLOW_RECURSION",
            AppError::Depth { .. } => "WORKFLOW_DEPTH",
            AppError::Inputs(_) => "INPUTS_INVALID",
            AppError::BadRequest(_) => "BAD_REQUEST",
            AppError::QuestionNotOpen(_) => "QUESTION_NOT_OPEN",
            AppError::NotRunning(_) => "RUN_NOT_ACTIVE",
            AppError::Servers(e) => e.code(),
            AppError::Store(_) => "STORE_ERROR",
            AppError::BlueprintEnv { .. } => "BLUEPRINT_ENV_REFUSED",
            AppError::DataFolder(e) => e.code(),
        }
    }
}
