//! Tool name → server, for tool calls that name no server: the one server that lists the
//! tool, or `TOOL_AMBIGUOUS` naming every server that does, or `TOOL_NOT_FOUND` with the
//! nearest names and the servers that could not be searched.

use super::Pool;
use super::server::Server;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Suggestions shown for an unknown tool.
const SUGGESTIONS: usize = 3;

impl Pool {
    /// Starts the servers not started yet (all at once) and finds the one with `tool`.
    pub(super) async fn route(&self, tool: &str) -> Result<Arc<Server>> {
        let cx = &self.inner.cx;
        let found = futures::future::join_all(
            self.inner.servers.values().map(|server| async move { (server, server.connection(cx).await) }),
        )
        .await;
        let mut owners = Vec::new();
        let mut unreachable = Vec::new();
        let mut listed = Vec::new();
        for (server, connection) in found {
            match connection {
                Ok(connection) => {
                    let discovery = connection.discovery.get();
                    if discovery.tool(tool).is_some() {
                        owners.push(server.clone());
                    }
                    listed.push((server.name.clone(), discovery));
                }
                Err(Error::ShutDown) => return Err(Error::ShutDown),
                Err(error) => unreachable.push((server.name.clone(), format!("{}: {error}", error.code()))),
            }
        }
        match owners.len() {
            1 => Ok(owners.remove(0)),
            0 => {
                let names = listed
                    .iter()
                    .flat_map(|(server, d)| d.tools.iter().map(move |t| (server.as_str(), t.name.as_ref())));
                Err(Error::ToolNotFound {
                    tool: tool.to_owned(),
                    server: None,
                    nearest: nearest(tool, names),
                    unreachable,
                })
            }
            _ => Err(Error::ToolAmbiguous {
                tool: tool.to_owned(),
                servers: owners.iter().map(|server| server.name.clone()).collect(),
            }),
        }
    }
}

/// Up to three tools whose names are close to `tool`, as "`name` (server `s`)".
pub(super) fn nearest<'a>(tool: &str, candidates: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let wanted = tool.to_lowercase();
    let mut scored: Vec<(f64, &str, &str)> = candidates
        .into_iter()
        .filter_map(|(server, name)| {
            let lower = name.to_lowercase();
            let score = strsim::jaro_winkler(&wanted, &lower);
            let related = lower.contains(&wanted) || wanted.contains(&lower);
            (score >= 0.75 || related).then_some((score, server, name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(SUGGESTIONS).map(|(_, server, name)| format!("`{name}` (server `{server}`)")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_best_first() {
        let tools = [("a", "echo"), ("a", "add"), ("b", "echo_twice"), ("b", "list_nodes")];
        assert_eq!(nearest("ecoh", tools), ["`echo` (server `a`)", "`echo_twice` (server `b`)"]);
        assert!(nearest("zzz", tools).is_empty());
    }
}
