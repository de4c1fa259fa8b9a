//! `perfflow-trace`: check, summarise and merge perfflow trace files.
//!
//! Run `perfflow-trace --help` for usage.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // Rust starts programs with SIGPIPE ignored, so a write to a pipe whose
    // reader has gone fails with an error. Like other Unix filters, this
    // tool ends through SIGPIPE instead, quietly: `perfflow-trace summary
    // … | head` prints its head and nothing about a broken pipe.
    // SAFETY: sets a signal disposition before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let args = std::env::args_os().skip(1).collect();
    let status = cli::run(
        args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(status)
}
