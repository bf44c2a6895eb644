//! A snapshot of what every configured server offers, for the blueprint validator
//! ([`ToolCatalog`]), the studio's palette and `mcpflow serve`'s `list_tools`.

use crate::error::Error;
use crate::pool::Discovery;
use indexmap::IndexMap;
use mcpflow_blueprint::{ServerInfo, ServerStatus, ToolCatalog};
use std::sync::Arc;

/// Every configured server, ready with its lists or unreachable with the reason.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    servers: IndexMap<String, CatalogServer>,
}

/// One server in a [`Catalog`].
#[derive(Debug, Clone)]
pub enum CatalogServer {
    Ready {
        discovery: Arc<Discovery>,
        info: Arc<ServerInfo>,
    },
    /// It could not be started or listed; `code` is the error's stable code
    /// (`SERVER_NOT_APPROVED` for a command nobody approved: it was not started).
    Unreachable {
        code: String,
        reason: String,
    },
    /// Not started yet, so its lists are not known ([`crate::Pool::listed_catalog`]).
    NotListed,
}

impl CatalogServer {
    fn ready(discovery: Arc<Discovery>) -> Self {
        let info = Arc::new(discovery.server_info());
        CatalogServer::Ready { discovery, info }
    }
}

impl Catalog {
    pub(crate) fn from_results(results: Vec<(String, Result<Arc<Discovery>, Error>)>) -> Self {
        let servers = results.into_iter().map(|(name, result)| {
            let server = match result {
                Ok(discovery) => CatalogServer::ready(discovery),
                Err(error) => CatalogServer::Unreachable { code: error.code().to_owned(), reason: error.to_string() },
            };
            (name, server)
        });
        Catalog { servers: servers.collect() }
    }

    pub(crate) fn listed(servers: impl Iterator<Item = (String, Option<Arc<Discovery>>)>) -> Self {
        let servers =
            servers.map(|(name, listed)| (name, listed.map_or(CatalogServer::NotListed, CatalogServer::ready)));
        Catalog { servers: servers.collect() }
    }

    pub fn get(&self, server: &str) -> Option<&CatalogServer> {
        self.servers.get(server)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &CatalogServer)> {
        self.servers.iter().map(|(name, server)| (name.as_str(), server))
    }
}

impl ToolCatalog for Catalog {
    fn server_names(&self) -> Vec<String> {
        self.servers.keys().cloned().collect()
    }

    fn server(&self, name: &str) -> ServerStatus {
        match self.servers.get(name) {
            None => ServerStatus::NotConfigured,
            Some(CatalogServer::Ready { info, .. }) => ServerStatus::Ready(info.clone()),
            Some(CatalogServer::Unreachable { code, reason }) => {
                ServerStatus::Unreachable { reason: format!("{code}: {reason}") }
            }
            Some(CatalogServer::NotListed) => ServerStatus::NotListed,
        }
    }
}
