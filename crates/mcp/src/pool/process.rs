//! Stdio server processes: spawned in their own process group with stdin/stdout/stderr
//! piped, stderr read line by line into the log, and always reaped.
//!
//! Stopping follows the MCP stdio shutdown sequence: stdin is closed (by the transport),
//! then the process gets a grace period, then `SIGTERM`, then `SIGKILL`, and it is waited
//! for. Signals go to the whole process group, so the grandchildren of wrappers such as
//! `npx` or `sh -c` go too. A process dropped without [`ChildProcess::stop`] is killed at
//! once (`kill_on_drop`) and reaped by tokio in the background.

use super::notes::{MAX_LOG_LINE, ServerNotes, Throttle};
use mcpflow_config::launch::StdioLaunch;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Time between `SIGTERM` and `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_millis(500);

#[derive(Debug)]
pub(crate) struct ChildProcess {
    child: Child,
    pid: Option<u32>,
    /// Ends when the process (and whatever inherited its stderr) closes stderr.
    stderr: Option<tokio::task::JoinHandle<()>>,
}

/// Starts the command; returns the process and its stdout and stdin.
pub(crate) fn spawn(
    launch: &StdioLaunch,
    notes: Arc<ServerNotes>,
) -> io::Result<(ChildProcess, ChildStdout, ChildStdin)> {
    let mut command = Command::new(&launch.command);
    command
        .args(&launch.args)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = &launch.cwd {
        command.current_dir(cwd);
    }
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn()?;
    let pid = child.id();
    let missing = || io::Error::other("the child's standard streams were not piped");
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stderr = child.stderr.take().map(|stderr| tokio::spawn(read_stderr(stderr, notes)));
    Ok((ChildProcess { child, pid, stderr }, stdout, stdin))
}

impl ChildProcess {
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The exit status, if the process has ended (and is now reaped).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits up to `limit` for the last stderr lines of a process that died, so an error
    /// message can quote them.
    pub async fn stderr_drained(&mut self, limit: Duration) {
        drain(self.stderr.take(), limit).await;
    }

    /// The stderr reader, to wait for it without holding the process.
    pub fn take_stderr_reader(&mut self) -> Option<tokio::task::JoinHandle<()>> {
        self.stderr.take()
    }

    /// Waits up to `grace` for the process to exit (its stdin should be closed by now),
    /// then terminates it; always reaps it.
    pub async fn stop(&mut self, grace: Duration) {
        if !grace.is_zero() && tokio::time::timeout(grace, self.child.wait()).await.is_ok() {
            self.signal_group_kill();
            return;
        }
        #[cfg(unix)]
        if self.exited().is_none() {
            self.signal_group(nix::sys::signal::Signal::SIGTERM);
            if tokio::time::timeout(TERM_GRACE, self.child.wait()).await.is_ok() {
                self.signal_group_kill();
                return;
            }
        }
        self.signal_group_kill();
        if let Err(error) = self.child.kill().await {
            tracing::warn!(pid = self.pid, %error, "could not kill a server process");
        }
    }

    /// Kills what is left of the process group (grandchildren a wrapper left behind).
    fn signal_group_kill(&self) {
        #[cfg(unix)]
        self.signal_group(nix::sys::signal::Signal::SIGKILL);
    }

    #[cfg(unix)]
    fn signal_group(&self, signal: nix::sys::signal::Signal) {
        let Some(pid) = self.pid.and_then(|pid| i32::try_from(pid).ok()) else { return };
        // ESRCH (the group is gone) is the common, good case.
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // `kill_on_drop` kills the process itself; this takes the rest of its group.
        if self.exited().is_none() {
            self.signal_group_kill();
        }
    }
}

/// Waits up to `limit` for a stderr reader to reach the end of the stream.
pub(crate) async fn drain(reader: Option<tokio::task::JoinHandle<()>>, limit: Duration) {
    if let Some(reader) = reader {
        let _ = tokio::time::timeout(limit, reader).await;
    }
}

/// Forwards stderr line by line until the process closes it.
async fn read_stderr(stderr: impl AsyncRead + Unpin, notes: Arc<ServerNotes>) {
    let mut read = BufReader::new(stderr);
    let mut line = Vec::new();
    let mut throttle = Throttle::default();
    loop {
        line.clear();
        let mut cut = false;
        loop {
            let available = match read.fill_buf().await {
                Ok(available) => available,
                Err(_) => return,
            };
            if available.is_empty() {
                if !line.is_empty() {
                    notes.stderr_line(String::from_utf8_lossy(&line).into_owned());
                }
                return;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..newline.unwrap_or(take)];
            let room = MAX_LOG_LINE.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..room.min(chunk.len())]);
            cut |= chunk.len() > room;
            read.consume(take);
            if newline.is_some() {
                break;
            }
        }
        let mut text = String::from_utf8_lossy(line.strip_suffix(b"\r").unwrap_or(&line)).into_owned();
        if cut {
            text.push('…');
        }
        let passed = notes.stderr_line(text);
        throttle.after(!passed).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stderr_lines_are_forwarded_and_long_ones_cut() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        let notes = Arc::new(ServerNotes::new("s", Some(tx)));
        let mut input = b"first\r\nsecond\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LOG_LINE + 10));
        input.extend_from_slice(b"\nlast");
        read_stderr(&input[..], notes).await;
        let lines: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok()).map(|l| l.line).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!((lines[0].as_str(), lines[1].as_str(), lines[3].as_str()), ("first", "second", "last"));
        assert_eq!(lines[2].chars().count(), MAX_LOG_LINE + 1);
    }
}
