//! `perfflow-trace check`: validates trace files and their expectations.

use std::collections::{BTreeSet, BinaryHeap};
use std::io::Write;
use std::path::{Path, PathBuf};

use perfflow_trace::{stream_trace, trace_files, CheckOptions, Checker, Event, Phase};

use super::{say, EXIT_FAILED, EXIT_OK};

/// Validate trace files, and optionally what they hold
///
/// Each FILE is checked: required fields are present and typed; every B is
/// closed by an E on the same thread, in stack order, with the same name;
/// B/E timestamps never decrease on a thread, except for a slice written
/// when it ends (a B directly followed by its E, as compact writers lay out
/// a parent after its children; Perfetto sorts by time); the spans of a
/// thread (B/E pairs, X events) nest, none overlapping another without
/// lying within it or enclosing it; every b pairs with an e of
/// the same pid, cat, id and name at or after its time, wherever the two
/// are in the file (a span begun on one thread and ended on another may
/// have its e written first); X events have dur >= 0; the file is not
/// truncated.
///
/// A valid FILE prints `FILE: ok, N events, M threads`; otherwise every
/// problem is printed to standard error as `FILE: INDEX: MESSAGE` (INDEX is
/// the event's position in the file, counting from 0; at most 10,000 per
/// FILE are listed). Expectations apply to each FILE on its own. Metadata
/// (M) events are never counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// Trace files to check (a DIR stands for the perfflow.*.pfw and perfflow.*.pftrace files in it)
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The file has exactly N events
    #[arg(long, value_name = "N")]
    pub expect_events: Option<usize>,
    /// The distinct event names are exactly the comma-separated LIST
    /// (repeat the option to add more)
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = name_item)]
    pub expect_names: Option<Vec<String>>,
    /// The distinct ph codes are exactly the comma-separated LIST, such as
    /// B,E
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = phase_item)]
    pub expect_phases: Option<Vec<String>>,
    /// The events come from at least N threads
    #[arg(long, value_name = "N")]
    pub min_threads: Option<usize>,
    /// Accept a trace cut short (no closing `]`), the B and b events it
    /// leaves open, and e events whose b was not written
    #[arg(long)]
    pub allow_truncated: bool,
}

impl Args {
    fn names(&self) -> Option<BTreeSet<String>> {
        set_of(&self.expect_names)
    }

    fn phases(&self) -> Option<BTreeSet<String>> {
        set_of(&self.expect_phases)
    }
}

/// The non-empty items of a repeated, comma-separated option.
fn set_of(items: &Option<Vec<String>>) -> Option<BTreeSet<String>> {
    items.as_ref().map(|items| {
        items
            .iter()
            .filter(|item| !item.is_empty())
            .cloned()
            .collect()
    })
}

/// One item of `--expect-names`, without surrounding spaces.
fn name_item(value: &str) -> Result<String, String> {
    Ok(value.trim().to_string())
}

/// One item of `--expect-phases`: a known phase code other than `M`.
fn phase_item(value: &str) -> Result<String, String> {
    let code = value.trim();
    if code.is_empty() {
        return Ok(String::new());
    }
    let phase = Phase::from_code(code);
    if phase == Phase::Metadata {
        return Err("metadata events (M) are not counted".to_string());
    }
    if !phase.is_known() {
        return Err(format!(
            "unknown phase `{code}`; phases are codes such as B, E, X, i, b, e"
        ));
    }
    Ok(code.to_string())
}

/// At most this many problems of one file are listed; the count covers
/// them all.
const LISTED_PROBLEMS: usize = 10_000;

/// The problems of one file in event order, at most [`LISTED_PROBLEMS`]
/// of them: those of the lowest event indexes.
#[derive(Default)]
struct Listed {
    /// `(index, arrival, message)`, a max-heap on the index.
    kept: BinaryHeap<(usize, usize, String)>,
    total: usize,
}

impl Listed {
    fn add(&mut self, index: Option<usize>, message: String) {
        self.total += 1;
        self.kept
            .push((index.unwrap_or(usize::MAX), self.total, message));
        if self.kept.len() > LISTED_PROBLEMS {
            self.kept.pop();
        }
    }

    fn into_messages(self) -> (Vec<String>, usize) {
        let total = self.total;
        let messages = self
            .kept
            .into_sorted_vec()
            .into_iter()
            .map(|(_, _, message)| message)
            .collect();
        (messages, total)
    }
}

/// What `check` counts for its one-line report and the expectations.
#[derive(Default)]
struct Tally {
    events: usize,
    threads: BTreeSet<(i64, i64)>,
    names: BTreeSet<String>,
    phases: BTreeSet<String>,
}

impl Tally {
    fn add(&mut self, event: &Event, names: bool) {
        if event.is_metadata() {
            return;
        }
        self.events += 1;
        if let Some(thread) = event.thread() {
            self.threads.insert(thread);
        }
        if names {
            if let Some(name) = &event.name {
                if !self.names.contains(name) {
                    self.names.insert(name.clone());
                }
            }
        }
        if let Some(phase) = &event.ph {
            if !self.phases.contains(phase.code()) {
                self.phases.insert(phase.code().to_string());
            }
        }
    }
}

pub fn run(command: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let options = CheckOptions {
        allow_truncated: command.allow_truncated,
    };
    // A directory stands for the traces in it, as for every command.
    let files = match trace_files(&command.files, Path::new("")) {
        Ok(files) => files,
        Err(error) => {
            say(err, format_args!("perfflow-trace: check: {error}"));
            return EXIT_FAILED;
        }
    };
    let mut status = EXIT_OK;
    for file in &files {
        let shown = file.display();
        let mut checker = Checker::new(options);
        let mut tally = Tally::default();
        let mut listed = Listed::default();
        let read = stream_trace(file, |event| {
            tally.add(&event, command.expect_names.is_some());
            checker.push(&event, &mut |problem| {
                listed.add(problem.index, problem.to_string())
            });
        });
        let info = match read {
            Ok(info) => info,
            Err(error) => {
                say(err, error);
                status = EXIT_FAILED;
                continue;
            }
        };
        checker.finish(info.truncated, info.partial_line, &mut |problem| {
            listed.add(problem.index, problem.to_string())
        });
        for unmet in unmet_expectations(command, &tally) {
            listed.add(None, unmet);
        }
        let (failures, total) = listed.into_messages();
        if total == 0 {
            let state = if info.truncated {
                "ok (truncated)"
            } else {
                "ok"
            };
            say(
                out,
                format_args!(
                    "{shown}: {state}, {} events, {} threads",
                    tally.events,
                    tally.threads.len()
                ),
            );
        } else {
            for failure in &failures {
                say(err, format_args!("{shown}: {failure}"));
            }
            if total > failures.len() {
                say(
                    err,
                    format_args!(
                        "{shown}: ... and {} more problems, not listed",
                        total - failures.len()
                    ),
                );
            }
            let plural = if total == 1 { "" } else { "s" };
            say(
                err,
                format_args!("{shown}: FAILED, {total} problem{plural}"),
            );
            status = EXIT_FAILED;
        }
    }
    status
}

fn unmet_expectations(command: &Args, tally: &Tally) -> Vec<String> {
    let mut unmet = Vec::new();
    if let Some(expected) = command.expect_events {
        let found = tally.events;
        if found != expected {
            unmet.push(format!("expected {expected} events, found {found}"));
        }
    }
    if let Some(expected) = &command.names() {
        if let Some(difference) = set_difference(expected, &tally.names, true) {
            unmet.push(format!(
                "event names differ from --expect-names: {difference}"
            ));
        }
    }
    if let Some(expected) = &command.phases() {
        if let Some(difference) = set_difference(expected, &tally.phases, false) {
            unmet.push(format!(
                "event phases differ from --expect-phases: {difference}"
            ));
        }
    }
    if let Some(minimum) = command.min_threads {
        let found = tally.threads.len();
        if found < minimum {
            unmet.push(format!(
                "expected at least {minimum} threads, found {found}"
            ));
        }
    }
    unmet
}

/// Describes how `found` differs from `expected`, or `None` if they are
/// equal.
fn set_difference(
    expected: &BTreeSet<String>,
    found: &BTreeSet<String>,
    quote: bool,
) -> Option<String> {
    let show = |items: Vec<&String>| {
        items
            .iter()
            .map(|item| {
                if quote {
                    format!("\"{item}\"")
                } else {
                    item.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let missing: Vec<&String> = expected.difference(found).collect();
    let unexpected: Vec<&String> = found.difference(expected).collect();
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("missing {}", show(missing)));
    }
    if !unexpected.is_empty() {
        parts.push(format!("unexpected {}", show(unexpected)));
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Command;
    use super::*;

    fn check_args(list: &[&str]) -> Args {
        let mut argv = vec!["check"];
        argv.extend_from_slice(list);
        match parse(&argv).map(|cli| cli.command) {
            Ok(Command::Check(args)) => args,
            other => panic!("expected check arguments, got {other:?}"),
        }
    }

    fn usage_error(list: &[&str]) -> String {
        let mut argv = vec!["check"];
        argv.extend_from_slice(list);
        parse(&argv).expect_err("a usage error")
    }

    #[test]
    fn options_are_parsed_in_any_position() {
        let args = check_args(&[
            "--expect-events=4",
            "a.pfw",
            "--expect-names",
            "main, solve",
            "--expect-names=step",
            "--expect-phases",
            "B,E",
            "--min-threads",
            "2",
            "--allow-truncated",
            "b.pfw",
        ]);
        assert_eq!(args.files, [PathBuf::from("a.pfw"), PathBuf::from("b.pfw")]);
        assert_eq!(args.expect_events, Some(4));
        assert_eq!(
            args.names(),
            Some(["main", "solve", "step"].map(String::from).into())
        );
        assert_eq!(args.phases(), Some(["B", "E"].map(String::from).into()));
        assert_eq!(args.min_threads, Some(2));
        assert!(args.allow_truncated);
    }

    #[test]
    fn arguments_after_double_dash_are_files() {
        let args = check_args(&["--", "--odd-name.pfw"]);
        assert_eq!(args.files, [PathBuf::from("--odd-name.pfw")]);
    }

    #[test]
    fn bad_values_are_usage_errors_naming_the_option() {
        assert!(usage_error(&["a.pfw", "--expect-evnts", "3"]).contains("'--expect-evnts'"));
        assert!(usage_error(&["a.pfw", "--min-threads"]).contains("--min-threads <N>"));
        assert!(usage_error(&["a.pfw", "--expect-events=many"]).contains("invalid value 'many'"));
        assert!(
            usage_error(&["a.pfw", "--min-threads=1", "--min-threads=2"])
                .contains("cannot be used multiple times")
        );
        assert!(usage_error(&["a.pfw", "--expect-phases=B,Q"]).contains("unknown phase `Q`"));
        assert!(usage_error(&["a.pfw", "--expect-phases=M"]).contains("are not counted"));
        assert!(usage_error(&["--allow-truncated"]).contains("<FILE>..."));
    }
}
