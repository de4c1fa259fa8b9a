//! The `perfflow-trace` command line: one clap (derive) parser, one module
//! per command holding its arguments (`Args`) and what it runs (`run`).
//!
//! To add a command: a module with `#[derive(clap::Args)] pub struct Args`
//! and `pub fn run(&Args, out, err) -> u8`, one variant in [`Command`] and
//! one arm in [`run`].

use std::ffi::OsString;
use std::fmt::Display;
use std::io::Write;

use clap::{CommandFactory, Parser, Subcommand};

mod check;
mod compare;
mod convert;
mod critical_path;
mod db;
mod export;
mod generate;
mod merge;
mod profile;
mod report;
mod sql;
mod summary;
mod treatments;

/// Exit status: everything was valid.
pub const EXIT_OK: u8 = 0;
/// Exit status: a trace was unreadable, invalid or missed an expectation.
pub const EXIT_FAILED: u8 = 1;
/// Exit status: the command line was wrong.
pub const EXIT_USAGE: u8 = 2;

const ABOUT: &str = "Check, summarise, merge and query perfflow trace files";

const LONG_ABOUT: &str = "\
Check, summarise, merge and query perfflow trace files.

A program built with perfflow writes one Chrome trace file per process,
perfflow.array.<host>.<pid>.pfw, which Perfetto opens (with
log-format=perfetto, Perfetto's protobuf trace, .pftrace, which every
command reads as well; convert writes one as the other). This tool checks
such files, summarises where the time went, merges the processes and hosts
of a workflow into one timeline, imports runs into an SQLite database, and
exports its tables as Parquet.

Every command reads each FILE as a stream: memory does not grow with its
size (check keeps what is open; summary also keeps one entry per name;
merge keeps the thread numbers and the ends of flows), except critical-path
and profile, which hold every span of the workflow.";

const AFTER_HELP: &str = "\
Exit status:
  0  success: every FILE is valid and meets the expectations
  1  a FILE cannot be read, is invalid, or misses an expectation; a
     database or output file cannot be written
  2  the command line is wrong
  3  compare --fail-if-slower: a significant slowdown beyond the limit
  A reader that stops early (`| head`) ends the tool through SIGPIPE,
  quietly, as it does other Unix filters.

Examples:
  perfflow-trace check perfflow.array.node1.4242.pfw
  perfflow-trace check --expect-names main,solve --expect-phases B,E trace.pfw
  perfflow-trace check --allow-truncated --min-threads 4 killed.pfw
  perfflow-trace summary perfflow.array.*.pfw
  perfflow-trace merge --fix-clocks run/ -o workflow.pfw
  perfflow-trace db -o runs.sqlite run/ --run baseline --label nodes=4
  perfflow-trace sql runs.sqlite \"SELECT name, COUNT(*) FROM span GROUP BY name\"
  perfflow-trace critical-path run/ -o workflow.pfw
  perfflow-trace profile run/ --hatchet profile.json
  perfflow-trace convert perfflow.perfetto.node1.4242.pftrace trace.pfw
  perfflow-trace compare --a base/* --b new/* --fail-if-slower 5
  perfflow-trace treatments runs.sqlite --score wall
  perfflow-trace export --parquet tables/ runs.sqlite";

#[derive(Debug, Parser)]
#[command(
    name = "perfflow-trace",
    version = perfflow_monitor::install::static_version_line(env!("CARGO_PKG_VERSION")),
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
    propagate_version = true,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Check(check::Args),
    Summary(summary::Args),
    Merge(merge::Args),
    Db(db::Args),
    Sql(sql::Args),
    Export(export::Args),
    CriticalPath(critical_path::Args),
    Profile(profile::Args),
    Report(report::Args),
    Convert(convert::Args),
    Compare(compare::Args),
    Treatments(treatments::Args),
    Completions(generate::CompletionsArgs),
    Man(generate::ManArgs),
}

/// The clap description of the command line (for completions and pages).
pub fn command() -> clap::Command {
    Cli::command()
}

/// Runs the tool with `args` (without the program name), writing normal
/// output to `out` and diagnostics to `err`; returns the exit status.
pub fn run(args: Vec<OsString>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let argv = std::iter::once(OsString::from("perfflow-trace")).chain(args);
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(error) => {
            // --help and --version are "errors" that print to stdout.
            let to_out = !error.use_stderr();
            let text = error.render().to_string();
            if to_out {
                let _ = write!(out, "{text}");
                return EXIT_OK;
            }
            let _ = write!(err, "{text}");
            return EXIT_USAGE;
        }
    };
    match &cli.command {
        Command::Check(args) => check::run(args, out, err),
        Command::Summary(args) => summary::run(args, out, err),
        Command::Merge(args) => merge::run(args, out, err),
        Command::Db(args) => db::run(args, out, err),
        Command::Sql(args) => sql::run(args, out, err),
        Command::Export(args) => export::run(args, out, err),
        Command::CriticalPath(args) => critical_path::run(args, out, err),
        Command::Profile(args) => profile::run(args, out, err),
        Command::Report(args) => report::run(args, out, err),
        Command::Convert(args) => convert::run(args, out, err),
        Command::Compare(args) => compare::run(args, out, err),
        Command::Treatments(args) => treatments::run(args, out, err),
        Command::Completions(args) => generate::completions(args, out, err),
        Command::Man(args) => generate::man(args, out, err),
    }
}

/// Writes one line. Output errors (such as a closed pipe) are ignored: the
/// exit status already tells the outcome.
fn say(stream: &mut dyn Write, text: impl Display) {
    let _ = writeln!(stream, "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parsed command of `list`, or clap's error message.
    pub(crate) fn parse(list: &[&str]) -> Result<Cli, String> {
        Cli::try_parse_from(std::iter::once("perfflow-trace").chain(list.iter().copied()))
            .map_err(|e| e.render().to_string())
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn usage_errors_exit_with_status_two_and_print_nothing_on_stdout() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let args = ["check", "--bogus", "x"].map(OsString::from).to_vec();
        assert_eq!(run(args, &mut out, &mut err), EXIT_USAGE);
        assert!(out.is_empty());
        let err = String::from_utf8(err).expect("UTF-8");
        assert!(err.contains("unexpected argument '--bogus'"), "{err}");
        assert!(err.contains("Usage: perfflow-trace check"), "{err}");
    }

    #[test]
    fn help_goes_to_stdout_with_status_zero() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let args = ["check", "x", "--help"].map(OsString::from).to_vec();
        assert_eq!(run(args, &mut out, &mut err), EXIT_OK);
        assert!(err.is_empty());
        assert!(String::from_utf8_lossy(&out).contains("--expect-names"));
    }

    #[test]
    fn missing_command_and_unknown_command_are_usage_errors() {
        assert!(parse(&[]).unwrap_err().contains("Usage: perfflow-trace"));
        assert!(parse(&["verify"])
            .unwrap_err()
            .contains("unrecognized subcommand 'verify'"));
    }
}
