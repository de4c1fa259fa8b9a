//! `perfflow-trace`: check, summarise and merge perfflow trace files.
//!
//! Run `perfflow-trace --help` for usage.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    let args = std::env::args_os().skip(1).collect();
    let status = cli::run(
        args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(status)
}
