//! `perfflow-trace convert`: a trace in the other format.

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::convert;

use super::{say, EXIT_FAILED, EXIT_OK};

/// Write a trace in the other format: Chrome JSON (.pfw) or Perfetto (.pftrace)
///
/// Reads INPUT (a .pfw or a .pftrace, told apart by its content) event by
/// event and writes OUTPUT in the format its name says: `*.pftrace` is
/// Perfetto's protobuf trace, any other name Chrome JSON as the runtime
/// writes it. A .pftrace written by `log-format=perfetto` becomes the .pfw
/// of the same events; a .pfw becomes a .pftrace that Perfetto opens
/// (compact `X` slices become a begin and an end; each async span gets a
/// track of its own, its `b` and `e` paired by id and time whatever their
/// order in the file). An input cut short is converted up to its last
/// whole event; an event a .pftrace cannot hold (an `E` with nothing open
/// on its thread, an `e` that no `b` pairs with) is an error naming it.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// The trace to read (.pfw or .pftrace)
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// The trace to write: *.pftrace for Perfetto, any other name for JSON
    #[arg(value_name = "OUTPUT")]
    pub output: PathBuf,
}

pub fn run(command: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match convert(&command.input, &command.output) {
        Ok(done) => {
            let format = if done.to_perfetto {
                "Perfetto"
            } else {
                "Chrome JSON"
            };
            let cut = if done.truncated {
                " (the input was cut short)"
            } else {
                ""
            };
            say(
                out,
                format_args!(
                    "{}: {} events as {format}{cut}",
                    command.output.display(),
                    done.events
                ),
            );
            EXIT_OK
        }
        Err(error) => {
            say(err, format_args!("perfflow-trace: convert: {error}"));
            EXIT_FAILED
        }
    }
}
