//! A pump between the client's byte stream and a fixture server that can slip raw lines onto the wire
//! and cut the connection — the faulty fixture's way to misbehave below the protocol.

use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream},
    sync::mpsc,
};
use tokio_util::sync::CancellationToken;

const BUFFER: usize = 256 * 1024;

/// The server's handle on its pump.
#[derive(Debug, Clone)]
pub(crate) struct Tap {
    inject: mpsc::UnboundedSender<Vec<u8>>,
    cut: CancellationToken,
    /// Cancelled when the server stops reading what the client sends (it stays open).
    deaf: CancellationToken,
    /// Cancelled when the pump has stopped and dropped the client's stream.
    stopped: CancellationToken,
}

impl Tap {
    /// Writes `line` (plus a newline) to the client before the next message the server sends.
    pub(crate) fn inject_line(&self, line: &str) {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        if self.inject.send(bytes).is_err() {
            tracing::debug!("pump already stopped; injected line dropped");
        }
    }

    /// Stops reading what the client sends, for good, without closing it: the client's
    /// writes fill the pipe and then wait.
    pub(crate) fn deafen(&self) {
        self.deaf.cancel();
    }

    /// Drops both directions of the client's connection, as if the server process had died, and waits
    /// until it is gone (so nothing the server sends afterwards can reach the client).
    pub(crate) async fn cut(&self) {
        self.cut.cancel();
        self.stopped.cancelled().await;
    }
}

/// Starts pumping between `reader`/`writer` (the client's side) and the returned stream, which the
/// server serves on.
pub(crate) fn spawn<R, W>(reader: R, writer: W) -> (Tap, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_end, pump_end) = tokio::io::duplex(BUFFER);
    let (inject, injected) = mpsc::unbounded_channel();
    let cut = CancellationToken::new();
    let stopped = CancellationToken::new();
    let deaf = CancellationToken::new();
    tokio::spawn(run(
        reader,
        writer,
        pump_end,
        injected,
        Tokens { cut: cut.clone(), stopped: stopped.clone(), deaf: deaf.clone() },
    ));
    (Tap { inject, cut, stopped, deaf }, server_end)
}

/// What the pump's owner can do to it.
struct Tokens {
    cut: CancellationToken,
    stopped: CancellationToken,
    deaf: CancellationToken,
}

async fn run<R, W>(
    reader: R,
    writer: W,
    pump_end: DuplexStream,
    injected: mpsc::UnboundedReceiver<Vec<u8>>,
    Tokens { cut, stopped, deaf }: Tokens,
) where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    // Declared before the streams (parameters moved into locals) so it fires after they are dropped.
    let _stopped = stopped.drop_guard();
    let mut reader = reader;
    let (from_server, mut to_server) = tokio::io::split(pump_end);
    let upstream = async {
        let copied = tokio::select! {
            // Deaf: nothing more is read, and the client's side stays open.
            () = deaf.cancelled() => std::future::pending().await,
            copied = tokio::io::copy(&mut reader, &mut to_server) => copied,
        };
        // The client closed its side: let the server see end of input.
        let _ = to_server.shutdown().await;
        copied
    };
    let downstream = forward_lines(from_server, writer, injected);
    tokio::select! {
        () = cut.cancelled() => tracing::info!("connection cut on purpose"),
        (up, down) = async { tokio::join!(upstream, downstream) } => {
            if let Err(error) = up {
                tracing::debug!(%error, "client to server copy ended");
            }
            if let Err(error) = down {
                tracing::debug!(%error, "server to client copy ended");
            }
        }
    }
    // Returning drops the reader, the writer and the pump's end of the server stream.
}

/// Copies the server's output line by line, writing injected lines at line boundaries only.
async fn forward_lines<R, W>(
    from_server: R,
    mut writer: W,
    mut injected: mpsc::UnboundedReceiver<Vec<u8>>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut from_server = BufReader::with_capacity(BUFFER, from_server);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = from_server.read_until(b'\n', &mut line).await?;
        while let Ok(extra) = injected.try_recv() {
            writer.write_all(&extra).await?;
        }
        if read == 0 {
            break;
        }
        writer.write_all(&line).await?;
        writer.flush().await?;
    }
    writer.flush().await?;
    writer.shutdown().await
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn injected_line_precedes_the_next_server_line() {
        let (client, pump_side) = tokio::io::duplex(1024);
        let (read, write) = tokio::io::split(pump_side);
        let (tap, mut server) = spawn(read, write);
        tap.inject_line("garbage");
        server.write_all(b"{\"a\":1}\n").await.unwrap();
        drop(server);
        let mut out = String::new();
        let (mut client_read, _client_write) = tokio::io::split(client);
        client_read.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "garbage\n{\"a\":1}\n");
    }

    #[tokio::test]
    async fn cut_closes_the_client_stream() {
        let (mut client, pump_side) = tokio::io::duplex(1024);
        let (read, write) = tokio::io::split(pump_side);
        let (tap, _server) = spawn(read, write);
        tap.cut().await;
        let mut buf = [0_u8; 8];
        let read = tokio::time::timeout(std::time::Duration::from_secs(5), client.read(&mut buf)).await.unwrap();
        assert_eq!(read.unwrap(), 0);
    }
}
