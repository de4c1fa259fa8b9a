//! `perfflow-trace`: check, summarise and merge perfflow trace files.
//!
//! Run `perfflow-trace --help` for usage.

use std::ffi::OsString;
use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // Rust starts programs with SIGPIPE ignored, so a write to a pipe whose
    // reader has gone fails with an error. Like other Unix filters, this
    // tool ends through SIGPIPE instead, quietly: `perfflow-trace summary
    // … | head` prints its head and nothing about a broken pipe.
    // SAFETY: sets a signal disposition before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let run = |args| {
        cli::run(
            args,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        )
    };
    // The command runs on a thread with a large stack: call trees and
    // span stacks are walked recursively, and a trace of deep recursion
    // (100,000 nested spans) needs more than the main thread's 8 MiB. Only
    // the pages used are taken.
    let spawned = std::thread::Builder::new()
        .name("perfflow-trace".into())
        .stack_size(STACK_BYTES)
        .spawn({
            let args = args.clone();
            move || run(args)
        });
    let status = match spawned {
        // A panic has printed its message; 101 is Rust's status for it.
        Ok(thread) => thread.join().unwrap_or(101),
        Err(_) => run(args),
    };
    ExitCode::from(status)
}

/// The stack of the thread that runs the command.
const STACK_BYTES: usize = 1 << 30;
