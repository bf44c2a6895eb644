//! Running a fixture server: in-process over `tokio::io::duplex`, or over this process's stdin/stdout.

use rmcp::{RoleServer, ServerHandler, ServiceExt, transport::IntoTransport};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream};

use crate::{
    Error, Fixture, Result,
    cluster::ClusterSim,
    echo::Echo,
    faulty::{Crash, Faulty},
    pump,
};

/// Buffer of the in-process pipe, per direction.
const DUPLEX_BUFFER: usize = 1024 * 1024;

/// Spawns `fixture` on the current tokio runtime, serving MCP over one end of a `tokio::io::duplex`
/// pipe, and returns the other end for a client: `().serve(spawn_in_process(fixture)).await`.
///
/// The server stops when the client drops its end. In-process, `faulty`'s `crash` drops the connection
/// instead of exiting the process.
///
/// # Panics
///
/// When called outside a tokio runtime.
pub fn spawn_in_process(fixture: Fixture) -> DuplexStream {
    let (client, server) = tokio::io::duplex(DUPLEX_BUFFER);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server);
        if let Err(error) = serve(fixture, read, write, Crash::DropConnection).await {
            tracing::warn!(%error, "in-process fixture server stopped");
        }
    });
    client
}

/// Serves `fixture` over stdin/stdout until the client closes stdin. `faulty`'s `crash` exits the
/// process with status 3.
pub async fn serve_stdio(fixture: Fixture) -> Result<()> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    serve(fixture, read, write, Crash::ExitProcess).await
}

async fn serve<R, W>(fixture: Fixture, read: R, write: W, crash: Crash) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    tracing::info!(fixture = fixture.name(), "serving");
    match fixture {
        Fixture::Echo => run(Echo::new(), (read, write)).await,
        Fixture::ClusterSim(config) => run(ClusterSim::new(&config), (read, write)).await,
        Fixture::Faulty => {
            let (tap, server_end) = pump::spawn(read, write);
            run(Faulty::new(tap, crash), server_end).await
        }
    }
}

async fn run<S, T, E, A>(service: S, transport: T) -> Result<()>
where
    S: ServerHandler,
    T: IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let running = service.serve(transport).await.map_err(|e| Error::Initialize(Box::new(e)))?;
    let reason = running.waiting().await?;
    tracing::info!(?reason, "fixture server finished");
    Ok(())
}
