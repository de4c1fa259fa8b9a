//! Runtime settings read from `PERFFLOW_OPTIONS`.
//!
//! The variable holds `key=value` pairs separated by colons, with the option
//! names and meanings of PerfFlowAspect, so a program traced with either
//! runtime is configured the same way:
//!
//! ```text
//! PERFFLOW_OPTIONS="name=solver:log-event=compact:log-filename-include=name,pid"
//! ```
//!
//! | option | default | values |
//! |---|---|---|
//! | `name` | `generic` | any non-empty text |
//! | `log-filename-include` | `hostname,pid` | comma-separated list of `name`, `instance-path`, `hostname`, `pid`, in any order, each at most once |
//! | `log-dir` | `./` | a directory (the runtime creates it, with its parents) |
//! | `log-enable` | `True` | `True`, `False` |
//! | `cpu-mem-usage` | `False` | `True`, `False` |
//! | `log-event` | `Verbose` | `Verbose`, `Compact` |
//! | `log-format` | `Array` | `Array`, `Object` |
//! | `sampler` | `False` | `True`, `False` |
//! | `sampler-interval` | `100ms` | a duration from 10ms to 24h |
//! | `sampler-metrics` | `proc,system,net,ib,rapl,perf,gpu` | comma-separated list of these sources |
//! | `signals` | `TERM,ABRT` | `none`, or a comma-separated list of `TERM`, `INT`, `HUP`, `QUIT`, `ABRT` |
//! | `flush-interval` | `1s` | a duration from 10ms to 24h |
//! | `labels` | `none` | `none`, or a comma-separated list of `key=value` |
//!
//! The same table, generated from [`OPTIONS`], is returned by
//! [`markdown_table`].
//!
//! # Syntax
//!
//! * Option names and the words of enumerated values are matched without
//!   regard to case (`True`, `true`, `TRUE`); booleans also accept `1`/`0`,
//!   `yes`/`no` and `on`/`off`. The text of `name` and `log-dir` is kept as
//!   written.
//! * Whitespace around names and values is trimmed; empty segments
//!   (`a=b::c=d`, a trailing `:`) are skipped.
//! * Only the first `=` of a segment separates name from value, so a value
//!   may contain `=`. A value cannot contain `:`, the separator.
//! * When an option is given twice, the later one wins.
//!
//! # Mistakes
//!
//! Parsing never fails, never panics and never prints. Each problem (an
//! unknown option, a value that is empty or not accepted, a segment without
//! `=`) yields one [`OptionWarning`], whose `Display` is a single line for
//! the runtime to print on stderr. An option with a bad value is set back to
//! its default; every other option still applies. A duration written
//! without a unit is read as seconds, and also yields one line saying so.
//!
//! Durations share the monitor's syntax ([`perfflow_monitor::duration`]):
//! `500ms`, `2s`, `1.5m`, `1h`; `2` alone is two seconds, in both tools.
//!
//! # Adding an option
//!
//! Add a field to [`Options`] and its default to `Options::default`, then
//! one [`OptionSpec`] entry to [`OPTIONS`] whose `apply` function parses the
//! value into that field (the helpers `boolean` and `choice` cover the
//! common cases). The parser, the warnings, the list of known names and the
//! generated documentation pick the entry up from the table.

use std::borrow::Cow;
use std::fmt;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use perfflow_monitor::Source;

use crate::clock::ClockSource;

/// The environment variable the runtime reads its settings from.
pub const ENV_VAR: &str = "PERFFLOW_OPTIONS";

/// Start of every warning line.
pub const WARNING_PREFIX: &str = "perfflow: PERFFLOW_OPTIONS: ";

/// One part of the trace file name, chosen with `log-filename-include`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilenamePart {
    /// The `name` option.
    Name,
    /// The instance path (see [`crate::instance`]), written inside braces.
    InstancePath,
    /// The host name.
    Hostname,
    /// The process id.
    Pid,
}

impl FilenamePart {
    /// Every part, in the order the documentation lists them.
    pub const ALL: [FilenamePart; 4] = [
        FilenamePart::Name,
        FilenamePart::InstancePath,
        FilenamePart::Hostname,
        FilenamePart::Pid,
    ];

    /// The word that selects this part in `log-filename-include`.
    pub fn keyword(self) -> &'static str {
        match self {
            FilenamePart::Name => "name",
            FilenamePart::InstancePath => "instance-path",
            FilenamePart::Hostname => "hostname",
            FilenamePart::Pid => "pid",
        }
    }

    /// The part a `log-filename-include` word selects, case-insensitively.
    pub fn from_keyword(word: &str) -> Option<FilenamePart> {
        FilenamePart::ALL
            .into_iter()
            .find(|part| part.keyword().eq_ignore_ascii_case(word))
    }
}

/// How a traced call is written: `B` and `E` events, or one `X` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogEvent {
    /// A begin (`B`) and an end (`E`) event per call.
    Verbose,
    /// One complete (`X`) event with a duration per call.
    Compact,
}

/// The top-level shape of the trace file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// A JSON array of events.
    Array,
    /// A JSON object whose `traceEvents` member holds the events.
    Object,
    /// Perfetto's protobuf trace (`.pftrace`).
    Perfetto,
}

impl LogFormat {
    /// The word used for this format in trace file names.
    pub fn file_word(self) -> &'static str {
        match self {
            LogFormat::Array => "array",
            LogFormat::Object => "object",
            LogFormat::Perfetto => "perfetto",
        }
    }

    /// The extension of trace files in this format, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            LogFormat::Array | LogFormat::Object => "pfw",
            LogFormat::Perfetto => "pftrace",
        }
    }
}

/// A signal after which the runtime completes the trace before the process
/// ends by it (`signals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndSignal {
    /// SIGTERM: a batch scheduler's end of walltime, `kill`.
    Term,
    /// SIGINT: Ctrl-C.
    Int,
    /// SIGHUP: the terminal went away.
    Hup,
    /// SIGQUIT: Ctrl-Backslash.
    Quit,
    /// SIGABRT: `abort()`, a failed `assert`, an uncaught C++ exception.
    Abrt,
}

impl EndSignal {
    /// Every signal the option can name, in the documentation's order.
    pub const ALL: [EndSignal; 5] = [
        EndSignal::Term,
        EndSignal::Int,
        EndSignal::Hup,
        EndSignal::Quit,
        EndSignal::Abrt,
    ];

    /// The name without `SIG`, as the option writes it.
    pub fn name(self) -> &'static str {
        match self {
            EndSignal::Term => "TERM",
            EndSignal::Int => "INT",
            EndSignal::Hup => "HUP",
            EndSignal::Quit => "QUIT",
            EndSignal::Abrt => "ABRT",
        }
    }

    /// The signal number.
    pub fn number(self) -> libc::c_int {
        match self {
            EndSignal::Term => libc::SIGTERM,
            EndSignal::Int => libc::SIGINT,
            EndSignal::Hup => libc::SIGHUP,
            EndSignal::Quit => libc::SIGQUIT,
            EndSignal::Abrt => libc::SIGABRT,
        }
    }

    /// The signal a word names: `TERM` or `SIGTERM`, in any case.
    pub fn from_word(word: &str) -> Option<EndSignal> {
        let bare = match word.get(..3) {
            Some(sig) if sig.eq_ignore_ascii_case("sig") => &word[3..],
            _ => word,
        };
        EndSignal::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(bare))
    }
}

/// The runtime's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Name of this workflow component (`name`), as written by the user.
    /// Characters that cannot appear in a file name are replaced only where
    /// the name is used in one (see [`trace_file_name`]).
    pub name: String,
    /// The optional parts of the trace file name, in the user's order
    /// (`log-filename-include`); never empty, never with repeats.
    pub filename_include: Vec<FilenamePart>,
    /// Directory of the trace file (`log-dir`).
    pub log_dir: PathBuf,
    /// Whether anything is recorded at all (`log-enable`).
    pub log_enable: bool,
    /// Whether CPU and memory usage is recorded per call (`cpu-mem-usage`).
    pub cpu_mem_usage: bool,
    /// Begin/end pairs or complete events (`log-event`).
    pub log_event: LogEvent,
    /// JSON array or object (`log-format`).
    pub log_format: LogFormat,
    /// Whether node and process metrics are sampled into the trace
    /// (`sampler`).
    pub sampler: bool,
    /// Time between two metric samples (`sampler-interval`).
    pub sampler_interval: Duration,
    /// Metric sources to sample (`sampler-metrics`).
    pub sampler_metrics: Vec<Source>,
    /// Signals after which the trace is completed before the process ends
    /// by them (`signals`); empty for none.
    pub signals: Vec<EndSignal>,
    /// Longest time a published event waits before it is written to the
    /// trace file (`flush-interval`).
    pub flush_interval: Duration,
    /// The clock events are stamped with (`clock`); `None`: the TSC where
    /// it is invariant, else the monotonic clock.
    pub clock: Option<ClockSource>,
    /// Labels of the run (`labels`), `(key, value)` in the order given,
    /// written into the trace's `perfflow_process` metadata.
    pub labels: Vec<(String, String)>,
    /// Most bytes the trace file may hold (`max-trace-size`); `None`: no
    /// limit.
    pub max_trace_size: Option<u64>,
    /// Free space the trace leaves on its file system (`min-free-space`);
    /// `None`: none kept.
    pub min_free_space: Option<FreeSpace>,
}

/// Free space a trace leaves on the file system that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreeSpace {
    /// At least this many bytes.
    Bytes(u64),
    /// At least this percentage of the file system's size (1 to 99).
    Percent(u8),
}

impl FreeSpace {
    /// The bytes to keep free on a file system of `size` bytes.
    pub fn bytes_of(self, size: u64) -> u64 {
        match self {
            FreeSpace::Bytes(n) => n,
            FreeSpace::Percent(p) => (u128::from(size) * u128::from(p) / 100) as u64,
        }
    }
}

impl fmt::Display for FreeSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FreeSpace::Bytes(n) => write!(f, "{}", show_size(*n)),
            FreeSpace::Percent(p) => write!(f, "{p}% of the file system"),
        }
    }
}

/// `bytes` for a message: `1.5 GiB (1610612736 bytes)`, or `512 bytes`.
pub fn show_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let shown = format!("{value:.1}");
    let shown = shown.strip_suffix(".0").unwrap_or(&shown);
    format!("{shown} {} ({bytes} bytes)", UNITS[unit])
}

impl Default for Options {
    fn default() -> Options {
        Options {
            name: "generic".to_string(),
            filename_include: vec![FilenamePart::Hostname, FilenamePart::Pid],
            log_dir: PathBuf::from("./"),
            log_enable: true,
            cpu_mem_usage: false,
            log_event: LogEvent::Verbose,
            log_format: LogFormat::Array,
            sampler: false,
            sampler_interval: Duration::from_millis(100),
            sampler_metrics: Source::ALL.to_vec(),
            signals: vec![EndSignal::Term, EndSignal::Abrt],
            flush_interval: Duration::from_secs(1),
            clock: None,
            labels: Vec::new(),
            max_trace_size: None,
            min_free_space: Some(FreeSpace::Bytes(1 << 30)),
        }
    }
}

/// One problem found in `PERFFLOW_OPTIONS`, or one assumption made in
/// reading it (a duration without a unit).
///
/// `Display` writes the whole line, [`WARNING_PREFIX`] followed by
/// `message`, without a trailing newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionWarning {
    /// The option concerned: its canonical name when it is known, otherwise
    /// the name (or, for a segment without `=`, the segment) as written.
    pub option: String,
    /// The value given, trimmed; `None` for a segment without `=`.
    pub value: Option<String>,
    /// The line without [`WARNING_PREFIX`]: what is wrong, what is
    /// accepted and what is done instead.
    pub message: String,
}

impl OptionWarning {
    /// A warning whose message is kept on one line: control characters
    /// from the user's text (a newline inside a value, say) are written as
    /// escapes such as `\n`.
    fn new(option: &str, value: Option<&str>, message: String) -> OptionWarning {
        let message = if message.contains(char::is_control) {
            message
                .chars()
                .map(|c| {
                    if c.is_control() {
                        c.escape_debug().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        } else {
            message
        };
        OptionWarning {
            option: option.to_string(),
            value: value.map(str::to_string),
            message,
        }
    }
}

impl fmt::Display for OptionWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{WARNING_PREFIX}{}", self.message)
    }
}

impl std::error::Error for OptionWarning {}

/// One entry of the option table.
pub struct OptionSpec {
    /// The option's name in `PERFFLOW_OPTIONS`, in lower case.
    pub key: &'static str,
    /// The default, written as a value the option accepts.
    pub default: &'static str,
    /// The accepted values, as a phrase completing "expected ...".
    pub accepted: &'static str,
    /// One line on what the option does.
    pub description: &'static str,
    /// Parses a non-empty, trimmed value into its field, or says what is
    /// wrong with it (e.g. `unknown value 'loud'`). `Ok(Some(note))`: the
    /// value was read with an assumption the user is told in one line
    /// (`sampler-interval=2` is read as seconds).
    apply: fn(&mut Options, &str) -> Result<Option<String>, String>,
}

impl fmt::Debug for OptionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OptionSpec")
            .field("key", &self.key)
            .field("default", &self.default)
            .field("accepted", &self.accepted)
            .finish_non_exhaustive()
    }
}

const BOOLEAN_VALUES: &str = "True or False (also 1/0, yes/no, on/off)";

/// Every option the runtime understands, in documentation order.
pub static OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "name",
        default: "generic",
        accepted: "a non-empty name",
        description: "Name of this workflow component",
        apply: |o, v| {
            o.name = v.to_string();
            Ok(None)
        },
    },
    OptionSpec {
        key: "log-filename-include",
        default: "hostname,pid",
        accepted: "a comma-separated list of name, instance-path, hostname, pid, \
                   each at most once",
        description: "Parts of the trace file name, in the order given",
        apply: |o, v| {
            o.filename_include = filename_parts(v)?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "log-dir",
        default: "./",
        accepted: "a directory path",
        description: "Directory where the trace file is created",
        apply: |o, v| {
            o.log_dir = PathBuf::from(v);
            Ok(None)
        },
    },
    OptionSpec {
        key: "log-enable",
        default: "True",
        accepted: BOOLEAN_VALUES,
        description: "Record events at all",
        apply: |o, v| {
            o.log_enable = boolean(v)?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "cpu-mem-usage",
        default: "False",
        accepted: BOOLEAN_VALUES,
        description: "Record CPU and memory usage of each traced call",
        apply: |o, v| {
            o.cpu_mem_usage = boolean(v)?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "log-event",
        default: "Verbose",
        accepted: "Verbose or Compact",
        description: "B and E events per call (Verbose) or one X event (Compact)",
        apply: |o, v| {
            o.log_event = choice(
                v,
                &[
                    ("verbose", LogEvent::Verbose),
                    ("compact", LogEvent::Compact),
                ],
            )?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "log-format",
        default: "Array",
        accepted: "Array, Object or Perfetto",
        description: "Write a JSON array of events, an object with traceEvents, or Perfetto's \
                      protobuf trace (.pftrace)",
        apply: |o, v| {
            o.log_format = choice(
                v,
                &[
                    ("array", LogFormat::Array),
                    ("object", LogFormat::Object),
                    ("perfetto", LogFormat::Perfetto),
                ],
            )?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "sampler",
        default: "False",
        accepted: BOOLEAN_VALUES,
        description: "Sample node and process metrics into the trace as counter tracks",
        apply: |o, v| {
            o.sampler = boolean(v)?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "sampler-interval",
        default: "100ms",
        accepted: "a duration from 10ms to 24h: a number with a unit ns, us, ms, s, m or h \
                   (e.g. 100ms, 2s, 0.5s); a number alone is seconds",
        description: "Time between two metric samples",
        apply: |o, v| {
            let (interval, note) = duration(v, SAMPLER_INTERVAL_MIN)?;
            o.sampler_interval = interval;
            Ok(note)
        },
    },
    OptionSpec {
        key: "sampler-metrics",
        default: "proc,system,net,ib,rapl,perf,gpu",
        accepted: "a comma-separated list of proc, system, net, ib, rapl, perf, gpu",
        description: "Metric sources the sampler reads",
        apply: |o, v| {
            let sources = Source::parse_list(v).map_err(|e| e.to_string())?;
            if sources.is_empty() {
                return Err("no source named".to_string());
            }
            o.sampler_metrics = sources;
            Ok(None)
        },
    },
    OptionSpec {
        key: "signals",
        default: "TERM,ABRT",
        accepted: "none, or a comma-separated list of TERM, INT, HUP, QUIT, ABRT \
                   (SIG prefix optional), each at most once",
        description: "Signals after which the trace is completed before the process ends \
                      by them; a signal whose action is not the default when tracing \
                      starts is left alone",
        apply: |o, v| {
            o.signals = end_signals(v)?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "flush-interval",
        default: "1s",
        accepted: "a duration from 10ms to 24h: a number with a unit ns, us, ms, s, m or h \
                   (e.g. 500ms, 1s, 5s); a number alone is seconds",
        description: "Longest time a recorded event waits before it is written to the trace file: \
                      a process killed by SIGKILL keeps all but this last interval",
        apply: |o, v| {
            let (interval, note) = duration(v, FLUSH_INTERVAL_MIN)?;
            o.flush_interval = interval;
            Ok(note)
        },
    },
    OptionSpec {
        key: "clock",
        default: "auto",
        accepted: "tsc, monotonic or auto (tsc where the CPU has an invariant TSC: x86-64 with \
                   constant_tsc and nonstop_tsc; else monotonic)",
        description: "Clock events are stamped with: the time stamp counter (rdtsc, calibrated \
                      against CLOCK_MONOTONIC) or CLOCK_MONOTONIC; timestamps written are the same \
                      time base either way",
        apply: |o, v| {
            o.clock = choice(
                v,
                &[
                    ("auto", None),
                    ("tsc", Some(ClockSource::Tsc)),
                    ("monotonic", Some(ClockSource::Monotonic)),
                ],
            )?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "labels",
        default: "none",
        accepted: "none, or a comma-separated list of key=value (keys not empty, each at most \
                   once; no `,` or `:` inside)",
        description: "Labels of the run, written into the trace's perfflow_process metadata: \
                      `perfflow-trace db` stores them as the run's labels",
        apply: |o, v| {
            o.labels = labels(v)?;
            Ok(None)
        },
    },
    OptionSpec {
        key: "max-trace-size",
        default: "none",
        accepted: "none, or a size of at least 64K: a number with a unit K, M, G or T \
                   (powers of 1024; KiB or KB alike), a number alone is bytes",
        description: "Most bytes this process's trace file holds: writing stops before it \
                      would pass them, the file keeps what was written (read as cut short) \
                      and later events are counted as dropped",
        apply: |o, v| {
            o.max_trace_size = if v.eq_ignore_ascii_case("none") {
                None
            } else {
                Some(size(v, MIN_TRACE_SIZE)?)
            };
            Ok(None)
        },
    },
    OptionSpec {
        key: "min-free-space",
        default: "1G",
        accepted: "none, a size as for max-trace-size, or a percentage of the file system \
                   from 1% to 99%",
        description: "Free space the trace leaves on the file system that holds it, for the \
                      program's own files: writing stops before the free space would fall \
                      below it, as at max-trace-size",
        apply: |o, v| {
            o.min_free_space = if v.eq_ignore_ascii_case("none") {
                None
            } else if let Some(number) = v.strip_suffix('%') {
                let percent = number
                    .trim()
                    .parse::<u8>()
                    .ok()
                    .filter(|p| (1..=99).contains(p))
                    .ok_or_else(|| format!("'{v}' is not a percentage from 1% to 99%"))?;
                Some(FreeSpace::Percent(percent))
            } else {
                Some(FreeSpace::Bytes(size(v, 0)?))
            };
            Ok(None)
        },
    },
];

/// The smallest `max-trace-size`: room for a trace's opening and more.
const MIN_TRACE_SIZE: u64 = 64 << 10;

/// Parses a size: digits, then optionally a unit K, M, G or T (powers of
/// 1024; `KiB`, `KB` and `k` alike) or `B`; at least `min` bytes.
fn size(value: &str, min: u64) -> Result<u64, String> {
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = value.split_at(digits);
    let unit = unit.trim();
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("'{value}' is not a size: unknown unit '{unit}'")),
    };
    let bytes = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("'{value}' is not a size (digits, then K, M, G or T)"))?;
    if bytes < min {
        return Err(format!(
            "'{value}' is less than the smallest size, {}",
            show_size(min)
        ));
    }
    Ok(bytes)
}

/// The option table entry for `key`, matched case-insensitively.
pub fn find_option(key: &str) -> Option<&'static OptionSpec> {
    OPTIONS
        .iter()
        .find(|spec| spec.key.eq_ignore_ascii_case(key))
}

/// The shortest `sampler-interval`.
const SAMPLER_INTERVAL_MIN: Duration = Duration::from_millis(10);

const FLUSH_INTERVAL_MIN: Duration = Duration::from_millis(10);

/// The longest interval any option accepts: a day, far beyond any use and
/// small enough to add to any instant.
pub const INTERVAL_MAX: Duration = Duration::from_secs(24 * 3600);

/// Parses a duration with the syntax the monitor's `-i` shares (see
/// [`perfflow_monitor::duration`]), from `min` to [`INTERVAL_MAX`]; with
/// the note to print when the value had no unit and was read as seconds.
fn duration(v: &str, min: Duration) -> Result<(Duration, Option<String>), String> {
    let parsed =
        perfflow_monitor::duration::parse(v, min, INTERVAL_MAX).map_err(|e| e.to_string())?;
    Ok((parsed.duration, parsed.note(v)))
}

fn boolean(value: &str) -> Result<bool, String> {
    const TRUE: [&str; 4] = ["true", "1", "yes", "on"];
    const FALSE: [&str; 4] = ["false", "0", "no", "off"];
    if TRUE.iter().any(|w| w.eq_ignore_ascii_case(value)) {
        Ok(true)
    } else if FALSE.iter().any(|w| w.eq_ignore_ascii_case(value)) {
        Ok(false)
    } else {
        Err(format!("unknown value '{value}'"))
    }
}

/// Parses one of a fixed set of words (given in lower case).
fn choice<T: Copy>(value: &str, words: &[(&str, T)]) -> Result<T, String> {
    words
        .iter()
        .find(|(word, _)| word.eq_ignore_ascii_case(value))
        .map(|&(_, item)| item)
        .ok_or_else(|| format!("unknown value '{value}'"))
}

/// Parses the `log-filename-include` list. Items are trimmed; empty items
/// are skipped, but the list as a whole must name at least one part.
fn filename_parts(value: &str) -> Result<Vec<FilenamePart>, String> {
    unique_words(value, "part", FilenamePart::from_keyword)
}

/// Parses a comma-separated list of words, each naming one item (through
/// `lookup`) at most once. Items are trimmed; empty items are skipped, but
/// the list must name at least one `what`.
fn unique_words<T: PartialEq>(
    value: &str,
    what: &str,
    lookup: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, String> {
    let mut items = Vec::new();
    for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let item = lookup(word).ok_or_else(|| format!("unknown {what} '{word}' in '{value}'"))?;
        if items.contains(&item) {
            return Err(format!("duplicate {what} '{word}' in '{value}'"));
        }
        items.push(item);
    }
    if items.is_empty() {
        return Err(format!("no {what} named in '{value}'"));
    }
    Ok(items)
}

/// Parses the `signals` list: `none`, or signal names, each at most once.
fn end_signals(value: &str) -> Result<Vec<EndSignal>, String> {
    if value.eq_ignore_ascii_case("none") {
        return Ok(Vec::new());
    }
    unique_words(value, "signal", EndSignal::from_word)
}

/// Parses the `labels` list: `none`, or `key=value` items, each key at
/// most once. Keys and values are trimmed; a value may be empty.
fn labels(value: &str) -> Result<Vec<(String, String)>, String> {
    if value.eq_ignore_ascii_case("none") {
        return Ok(Vec::new());
    }
    let mut labels: Vec<(String, String)> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((key, label)) = item.split_once('=') else {
            return Err(format!("'{item}' in '{value}' is not key=value"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("'{item}' in '{value}' has no key"));
        }
        if labels.iter().any(|(k, _)| k == key) {
            return Err(format!("duplicate key '{key}' in '{value}'"));
        }
        labels.push((key.to_string(), label.trim().to_string()));
    }
    Ok(labels)
}

/// The known option names, comma-separated, for warnings.
fn known_keys() -> String {
    OPTIONS
        .iter()
        .map(|spec| spec.key)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Options {
    /// Parses the text of `PERFFLOW_OPTIONS`.
    ///
    /// Returns the settings, starting from the defaults, and one warning per
    /// problem, in the order found. Never fails and never prints.
    pub fn parse(text: &str) -> (Options, Vec<OptionWarning>) {
        let mut options = Options::default();
        let mut warnings = Vec::new();
        for segment in text.split(':').map(str::trim) {
            if segment.is_empty() {
                continue;
            }
            let Some((key, value)) = segment.split_once('=') else {
                warnings.push(OptionWarning::new(
                    segment,
                    None,
                    format!(
                        "missing '=' in '{segment}': expected <option>=<value> \
                         with option one of {}; ignored",
                        known_keys()
                    ),
                ));
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            let Some(spec) = find_option(key) else {
                let what = if key.is_empty() {
                    "missing option name".to_string()
                } else {
                    format!("unknown option '{key}'")
                };
                warnings.push(OptionWarning::new(
                    key,
                    Some(value),
                    format!(
                        "{what} (value '{value}'): expected one of {}; ignored",
                        known_keys()
                    ),
                ));
                continue;
            };
            let result = if value.is_empty() {
                Err("empty value".to_string())
            } else {
                (spec.apply)(&mut options, value)
            };
            if let Ok(Some(note)) = &result {
                warnings.push(OptionWarning::new(
                    spec.key,
                    Some(value),
                    format!("{}: {note}", spec.key),
                ));
            }
            if let Err(problem) = result {
                // Every default is an accepted value (checked by the tests),
                // so this restores the default field.
                let _ = (spec.apply)(&mut options, spec.default);
                warnings.push(OptionWarning::new(
                    spec.key,
                    Some(value),
                    format!(
                        "{problem} for {}: expected {}; using {}",
                        spec.key, spec.accepted, spec.default
                    ),
                ));
            }
        }
        (options, warnings)
    }

    /// Reads `PERFFLOW_OPTIONS` from the environment; unset or empty gives
    /// the defaults. A value that is not UTF-8 is read with its invalid
    /// bytes replaced by U+FFFD.
    pub fn from_env() -> (Options, Vec<OptionWarning>) {
        match std::env::var_os(ENV_VAR) {
            Some(text) => Options::parse(&text.to_string_lossy()),
            None => (Options::default(), Vec::new()),
        }
    }
}

/// Replaces the characters that cannot safely appear in one file name
/// component (`/`, `\`, NUL and other control characters) by `_`.
pub fn file_name_safe(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c == '/' || c == '\\' || c.is_control();
    if text.contains(unsafe_char) {
        Cow::Owned(text.replace(unsafe_char, "_"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The trace file name:
/// `perfflow.<array|object|perfetto>[.<name>][.{<instance-path>}][.<hostname>][.<pid>].<pfw|pftrace>`.
///
/// The optional parts appear in the order the user listed them in
/// `log-filename-include`; the instance path is written inside literal
/// braces. Characters unsafe in a file name are replaced by `_` in every
/// part (see [`file_name_safe`]).
pub fn trace_file_name(options: &Options, instance_path: &str, hostname: &str, pid: u32) -> String {
    let mut file = format!("perfflow.{}", options.log_format.file_word());
    for part in &options.filename_include {
        file.push('.');
        match part {
            FilenamePart::Name => file.push_str(&file_name_safe(&options.name)),
            FilenamePart::InstancePath => {
                file.push('{');
                file.push_str(&file_name_safe(instance_path));
                file.push('}');
            }
            FilenamePart::Hostname => file.push_str(&file_name_safe(hostname)),
            FilenamePart::Pid => {
                let _ = write!(file, "{pid}");
            }
        }
    }
    file.push('.');
    file.push_str(options.log_format.extension());
    file
}

/// The trace file's path: `log-dir` joined with [`trace_file_name`].
pub fn trace_path(options: &Options, instance_path: &str, hostname: &str, pid: u32) -> PathBuf {
    options
        .log_dir
        .join(trace_file_name(options, instance_path, hostname, pid))
}

/// A Markdown table of every option (name, default, accepted values,
/// description), generated from [`OPTIONS`] for the documentation.
pub fn markdown_table() -> String {
    let mut table =
        String::from("| option | default | values | description |\n|---|---|---|---|\n");
    for spec in OPTIONS {
        let _ = writeln!(
            table,
            "| `{}` | `{}` | {} | {} |",
            spec.key, spec.default, spec.accepted, spec.description
        );
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_in_the_table_is_accepted_and_matches_options_default() {
        let mut options = Options {
            name: String::new(),
            filename_include: Vec::new(),
            log_dir: PathBuf::new(),
            log_enable: false,
            cpu_mem_usage: true,
            log_event: LogEvent::Compact,
            log_format: LogFormat::Object,
            sampler: true,
            sampler_interval: Duration::from_secs(9),
            sampler_metrics: vec![Source::Gpu],
            signals: Vec::new(),
            flush_interval: Duration::from_secs(9),
            clock: Some(ClockSource::Tsc),
            labels: vec![("k".to_string(), "v".to_string())],
            max_trace_size: Some(1),
            min_free_space: None,
        };
        for spec in OPTIONS {
            assert_eq!(
                (spec.apply)(&mut options, spec.default),
                Ok(None),
                "{}",
                spec.key
            );
        }
        assert_eq!(options, Options::default());
    }

    #[test]
    fn option_names_in_the_table_are_unique_and_lower_case() {
        for (i, spec) in OPTIONS.iter().enumerate() {
            assert_eq!(spec.key, spec.key.to_ascii_lowercase());
            assert!(OPTIONS[..i].iter().all(|other| other.key != spec.key));
        }
    }

    #[test]
    fn the_markdown_table_has_one_row_per_option() {
        let table = markdown_table();
        assert_eq!(table.lines().count(), OPTIONS.len() + 2);
        assert!(table.contains("| `log-event` | `Verbose` | Verbose or Compact |"));
    }

    #[test]
    fn sizes_and_free_space_take_units_and_percentages() {
        let parse = |text: &str| Options::parse(text);
        let (o, w) = parse("max-trace-size=64K:min-free-space=5%");
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(o.max_trace_size, Some(64 << 10));
        assert_eq!(o.min_free_space, Some(FreeSpace::Percent(5)));
        for (text, bytes) in [
            ("2G", 2u64 << 30),
            ("3 MiB", 3 << 20),
            ("1tb", 1 << 40),
            ("70000", 70000),
        ] {
            let (o, w) = parse(&format!("max-trace-size={text}"));
            assert!(w.is_empty(), "{text}: {w:?}");
            assert_eq!(o.max_trace_size, Some(bytes), "{text}");
        }
        let (o, w) = parse("max-trace-size=none:min-free-space=none");
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((o.max_trace_size, o.min_free_space), (None, None));
        assert_eq!(
            Options::default().min_free_space,
            Some(FreeSpace::Bytes(1 << 30))
        );
        for bad in [
            "max-trace-size=1K",
            "max-trace-size=12X",
            "max-trace-size=-5M",
            "max-trace-size=99999999999T",
            "min-free-space=0%",
            "min-free-space=100%",
            "min-free-space=half",
        ] {
            let (o, w) = parse(bad);
            assert_eq!(w.len(), 1, "{bad}: {w:?}");
            assert_eq!(o, Options::default(), "{bad}");
        }
        assert_eq!(FreeSpace::Percent(5).bytes_of(1000), 50);
        assert_eq!(FreeSpace::Bytes(7).bytes_of(1000), 7);
        assert_eq!(show_size(512), "512 bytes");
        assert_eq!(show_size(1536 << 20), "1.5 GiB (1610612736 bytes)");
    }

    #[test]
    fn labels_are_key_value_pairs_in_the_order_given() {
        let (options, warnings) = Options::parse("labels= fs=shm , size=2,note=a=b,empty=");
        assert!(warnings.is_empty(), "{warnings:?}");
        let pairs = [("fs", "shm"), ("size", "2"), ("note", "a=b"), ("empty", "")];
        let expected: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(options.labels, expected);
    }

    #[test]
    fn a_label_without_a_key_or_given_twice_is_refused_whole() {
        for text in ["labels=a=1,=2", "labels=a=1,b", "labels=a=1,a=2"] {
            let (options, warnings) = Options::parse(text);
            assert_eq!(warnings.len(), 1, "{text}: {warnings:?}");
            assert!(warnings[0].message.contains("labels"), "{warnings:?}");
            assert!(options.labels.is_empty(), "{text}");
        }
    }
}
