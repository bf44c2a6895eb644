//! Stop signals as cancellation, the same for every front door: SIGINT (Ctrl-C),
//! SIGTERM (a service manager, `kill`) and SIGHUP (the terminal went away) all cancel
//! what is running so the servers' process groups are reaped, and the process then exits
//! with the shell's code for that signal (128 + its number: 130, 143, 129). A second
//! signal while shutting down exits at once, as a second Ctrl-C always has.
//!
//! Handlers are installed by [`watch`] and stay for the life of the process (a signal
//! caught once is no longer fatal by default), so install them only where a watcher
//! will act on them: the CLI's `run`, `rerun`, `serve` and `daemon`, and the studio.

use std::io::Write as _;
use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

/// A signal that asks mcpflow to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C in a terminal.
    Interrupt,
    /// SIGTERM: a service manager or `kill` asks the process to end.
    Terminate,
    /// SIGHUP: the controlling terminal closed.
    Hangup,
}

impl Signal {
    /// The exit code after this signal: 128 + the signal's number, as shells report it.
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
            Signal::Hangup => 129,
        }
    }

    /// The signal's name (`SIGTERM`).
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::Hangup => "SIGHUP",
        }
    }
}

/// What [`watch`] hands back: a token cancelled on the first signal, and which one it was.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    token: CancellationToken,
    received: Arc<OnceLock<Signal>>,
}

impl Stop {
    /// Cancelled when the first signal arrives. Hand it (or a child) to what must stop.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// The first signal received, if any.
    pub fn signal(&self) -> Option<Signal> {
        self.received.get().copied()
    }

    /// Waits for the first signal.
    pub async fn received(&self) -> Signal {
        self.token.cancelled().await;
        // Set before the token is cancelled; Interrupt only if someone else cancelled it.
        self.signal().unwrap_or(Signal::Interrupt)
    }
}

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP and watches them: the first
/// cancels [`Stop::token`] (after a line on stderr saying so); a second one exits the
/// process at once with its code. Call it inside a tokio runtime, before the work it
/// guards starts (a signal before then still ends the process the default way).
pub fn watch() -> std::io::Result<Stop> {
    let mut listener = Listener::install()?;
    let stop = Stop::default();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        let Some(first) = listener.next().await else { return };
        let _ = on_signal.received.set(first);
        let again = match first {
            Signal::Interrupt => "Ctrl-C",
            Signal::Terminate | Signal::Hangup => first.name(),
        };
        let _ = writeln!(std::io::stderr(), "cancelling ({} again to quit at once)…", again);
        on_signal.token.cancel();
        if let Some(second) = listener.next().await {
            std::process::exit(i32::from(second.exit_code()));
        }
    });
    Ok(stop)
}

/// The installed handlers.
#[derive(Debug)]
struct Listener {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
}

impl Listener {
    #[cfg(unix)]
    fn install() -> std::io::Result<Listener> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Listener {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    #[cfg(not(unix))]
    fn install() -> std::io::Result<Listener> {
        Ok(Listener {})
    }

    /// The next signal; `None` if the handlers can no longer deliver any.
    #[cfg(unix)]
    async fn next(&mut self) -> Option<Signal> {
        tokio::select! {
            s = self.interrupt.recv() => s.map(|()| Signal::Interrupt),
            s = self.terminate.recv() => s.map(|()| Signal::Terminate),
            s = self.hangup.recv() => s.map(|()| Signal::Hangup),
        }
    }

    #[cfg(not(unix))]
    async fn next(&mut self) -> Option<Signal> {
        tokio::signal::ctrl_c().await.ok().map(|()| Signal::Interrupt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal_number() {
        assert_eq!(Signal::Interrupt.exit_code(), 130);
        assert_eq!(Signal::Terminate.exit_code(), 143);
        assert_eq!(Signal::Hangup.exit_code(), 129);
    }
}
