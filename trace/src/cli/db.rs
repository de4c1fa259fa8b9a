//! `perfflow-trace db`: imports traces and monitor results into SQLite.

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{default_run_name, import, input_files, Imported};

use super::{say, EXIT_FAILED, EXIT_OK};

/// Import traces and monitor results into an SQLite database
///
/// Imports each FILE (a DIR stands for its perfflow.*.pfw files) into the
/// SQLite DATABASE (created if missing) as one run: processes, threads,
/// spans with depth and parent, instants, flows between spans, counters.
///
/// A perfflow-monitor results DIR (holding metrics/) also adds its metric
/// samples. Each run of `db` adds to the DATABASE; a file already imported
/// is skipped with a message. The schema is in docs/database.md.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// Trace files, directories of them, or perfflow-monitor results
    /// directories
    #[arg(required = true, value_name = "FILE|DIR")]
    pub inputs: Vec<PathBuf>,
    /// The SQLite database to add to
    #[arg(short, long, value_name = "DATABASE")]
    pub output: PathBuf,
    /// The run the files belong to (default: `run-N`, the next number);
    /// files added to an existing NAME join that run
    #[arg(long, value_name = "NAME")]
    pub run: Option<String>,
    /// A label of the run (repeatable; a KEY given again replaces its
    /// value); it wins over a label of the same KEY that the traces carry
    /// (the runtime's `labels` option)
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = label)]
    pub labels: Vec<(String, String)>,
}

/// `KEY=VALUE` with a non-empty KEY; the VALUE may hold `=` or be empty.
pub(super) fn label(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((key, label)) if !key.is_empty() => Ok((key.to_string(), label.to_string())),
        _ => Err("expected KEY=VALUE with a non-empty KEY".to_string()),
    }
}

pub fn run(command: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let output = &command.output;
    let files = match input_files(&command.inputs, output) {
        Ok(files) => files,
        Err(error) => {
            say(err, format_args!("perfflow-trace: db: {error}"));
            return EXIT_FAILED;
        }
    };
    let run = match &command.run {
        Some(run) => run.clone(),
        None => default_run_name(output),
    };
    match import(output, &files, &run, &command.labels) {
        Ok(done) => {
            for imported in done {
                match imported {
                    Imported::New {
                        path,
                        events,
                        spans,
                        truncated,
                    } => say(
                        out,
                        format_args!(
                            "{}: {events} events, {spans} spans into run {run}{}",
                            path.display(),
                            if truncated { " (cut short)" } else { "" }
                        ),
                    ),
                    Imported::Metrics { path, samples } => say(
                        out,
                        format_args!("{}: {samples} metric samples into run {run}", path.display()),
                    ),
                    Imported::Skipped { path, as_path, run } => say(
                        err,
                        format_args!(
                            "perfflow-trace: db: {}: already imported (as {as_path}, run {run}); skipped",
                            path.display()
                        ),
                    ),
                }
            }
            EXIT_OK
        }
        Err(error) => {
            say(err, format_args!("perfflow-trace: db: {error}"));
            EXIT_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Command;
    use super::*;

    #[test]
    fn inputs_an_output_a_run_and_labels_come_in_any_order() {
        let parsed = parse(&[
            "db",
            "a.pfw",
            "--label",
            "k=v=w",
            "-o",
            "x.sqlite",
            "--run=r",
            "dir",
            "--label=n=",
        ]);
        let Ok(Command::Db(args)) = parsed.map(|cli| cli.command) else {
            panic!("expected db arguments");
        };
        assert_eq!(
            args,
            Args {
                inputs: vec![PathBuf::from("a.pfw"), PathBuf::from("dir")],
                output: PathBuf::from("x.sqlite"),
                run: Some("r".to_string()),
                labels: vec![
                    ("k".to_string(), "v=w".to_string()),
                    ("n".to_string(), String::new())
                ],
            }
        );
    }

    #[test]
    fn missing_or_malformed_arguments_are_usage_errors() {
        assert!(parse(&["db", "a.pfw"])
            .unwrap_err()
            .contains("--output <DATABASE>"));
        assert!(parse(&["db", "-o", "x"])
            .unwrap_err()
            .contains("<FILE|DIR>"));
        assert!(parse(&["db", "a", "-o", "x", "--label", "k"])
            .unwrap_err()
            .contains("KEY=VALUE"));
        assert!(parse(&["db", "a", "-o", "x", "--run"])
            .unwrap_err()
            .contains("--run <NAME>"));
    }
}
