//! Standard output for every subcommand. A reader that goes away before the end
//! (`mcpflow runs --json | head -1`) is not a failure: the command ends quietly, as
//! ripgrep and coreutils do, where `println!` would panic ("failed printing to stdout:
//! Broken pipe"). [`outln!`] and [`out!`] return the write's `io::Result`; a command
//! passes it up with `?`, and `main`'s `report` ends one whose error is a closed pipe
//! ([`closed_in`]) with exit 0 and no message.

use std::io::{self, Write as _};
use std::process::ExitCode;

/// Writes formatted text to standard output (line-buffered, as `print!`).
pub fn write(args: std::fmt::Arguments<'_>) -> io::Result<()> {
    io::stdout().lock().write_fmt(args)
}

/// Whether a write failed because the reader closed its end of the pipe.
pub fn closed(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// A write whose reader may have gone: a closed pipe is not an error, for a command whose
/// work matters beyond what it prints (a run's exit code, `mcpflow test`'s JUnit file).
pub fn unless_closed(result: io::Result<()>) -> io::Result<()> {
    result.or_else(|e| if closed(&e) { Ok(()) } else { Err(e) })
}

/// Whether an error, or one of its causes, is a closed standard output.
pub fn closed_in(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| cause.downcast_ref::<io::Error>().is_some_and(closed))
}

/// The exit code of a command whose output could not be written: 0 when the reader
/// closed the pipe, else 2 with what failed.
#[allow(clippy::print_stderr)]
pub fn failed(e: &io::Error) -> ExitCode {
    if closed(e) {
        return ExitCode::SUCCESS;
    }
    eprintln!("error: writing to standard output: {e}");
    ExitCode::from(2)
}

/// `println!` that returns the write's result instead of panicking.
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that returns the write's result instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*))
    };
}

pub(crate) use {out, outln};
