//! `${env:NAME}` references in server configs, resolved when a server starts.

use crate::error::{Error, Result};
use std::sync::Arc;

/// Where `${env:NAME}` values come from. The default reads the process environment;
/// tests and embedders pass their own.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The process environment.
pub fn process_env() -> EnvLookup {
    Arc::new(|name: &str| std::env::var(name).ok())
}

/// Replaces every `${env:NAME}` in `text`. A variable that is not set is an error naming
/// it, the server and `field` (`args[1]`, `env.TOKEN`, `headers.Authorization`, `url`).
/// Text without a closing `}` is kept as written.
pub fn resolve(text: &str, lookup: &EnvLookup, server: &str, field: &str) -> Result<String> {
    const OPEN: &str = "${env:";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let Some(end) = after.find('}') else { break };
        let name = &after[..end];
        let value = lookup(name).ok_or_else(|| Error::EnvVarMissing {
            server: server.to_owned(),
            name: name.to_owned(),
            field: field.to_owned(),
        })?;
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The names of the variables `text` refers to.
pub fn references(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${env:") {
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else { break };
        names.push(&after[..end]);
        rest = &after[end + 1..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup() -> EnvLookup {
        Arc::new(|name: &str| match name {
            "TOKEN" => Some("s3cret".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        })
    }

    #[test]
    fn replaces_every_reference() {
        let text = "Bearer ${env:TOKEN} and ${env:EMPTY}${env:TOKEN}!";
        assert_eq!(resolve(text, &lookup(), "s", "h").unwrap(), "Bearer s3cret and s3cret!");
        assert_eq!(resolve("plain $HOME ${env:", &lookup(), "s", "h").unwrap(), "plain $HOME ${env:");
    }

    #[test]
    fn a_missing_variable_is_named() {
        let err = resolve("--token=${env:NOPE}", &lookup(), "inv", "args[0]").unwrap_err();
        assert_eq!(err.code(), "ENV_VAR_MISSING");
        assert_eq!(
            err.to_string(),
            "server `inv`: environment variable `NOPE` is not set (referenced as `${env:NOPE}` in args[0]); set it in \
             the environment that runs mcpflow"
        );
    }

    #[test]
    fn lists_references() {
        assert_eq!(references("${env:A}/x/${env:B}"), ["A", "B"]);
    }
}
