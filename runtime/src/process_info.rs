//! Who and where this process is: the `perfflow_process` metadata written
//! at the opening of its trace, beside `process_name`.
//!
//! ```text
//! {"name":"perfflow_process","ph":"M","pid":7,"tid":7,"args":{"host":"node1","exe":"solver","rank":3,
//!  "command":["./solver","-n","64"],
//!  "clock":{"realtime_ns":1763700000123456789,"monotonic_ns":5123456789,"esterror_us":16,"maxerror_us":250,"synchronized":true}}}
//! ```
//!
//! `rank` is the MPI rank the launcher exported (absent when none did);
//! `command` is the program's command line, bounded by [`command_line`]
//! (`"command_cut":true` follows when words were left out or shortened);
//! `clock` pairs the monotonic clock the events are stamped with and the
//! wall clock their `ts` is converted to, and gives the kernel's estimate
//! of the wall clock's error (`adjtimex`: `esterror`, `maxerror` in µs,
//! absent when the kernel refuses); `labels` holds the `labels` option's
//! `key=value` pairs (absent when none were given), which `perfflow-trace
//! db` stores as the run's labels. `perfflow-trace merge` names processes
//! `host · exe [pid] rank N` from it.

use serde_json::{json, Map, Value};

use crate::clock::Epoch;

/// Variables in which launchers export the MPI rank, the first set one
/// wins: PMIx, PMI-1/2 (MPICH, Intel MPI), Open MPI, SLURM, Flux.
pub const RANK_VARIABLES: [&str; 5] = [
    "PMIX_RANK",
    "PMI_RANK",
    "OMPI_COMM_WORLD_RANK",
    "SLURM_PROCID",
    "FLUX_TASK_RANK",
];

/// The rank from the first of [`RANK_VARIABLES`] that `var` finds set to a
/// whole number; a variable set to anything else is passed over.
pub fn rank_from(var: impl Fn(&str) -> Option<String>) -> Option<u64> {
    RANK_VARIABLES
        .iter()
        .filter_map(|name| var(name))
        .find_map(|value| value.trim().parse().ok())
}

/// At most this many words of the command line are recorded.
pub const COMMAND_WORDS: usize = 64;
/// At most this many bytes of the command line are recorded, all words
/// together.
pub const COMMAND_BYTES: usize = 4096;

/// The command line `args`, bounded: at most [`COMMAND_WORDS`] words and
/// [`COMMAND_BYTES`] bytes, a word cut at a character boundary where the
/// bytes run out; words that are not UTF-8 are converted lossily. The flag
/// says whether anything was left out or cut.
pub fn command_line(args: impl IntoIterator<Item = std::ffi::OsString>) -> (Vec<String>, bool) {
    let mut words = Vec::new();
    let mut left = COMMAND_BYTES;
    let mut cut = false;
    for arg in args {
        if words.len() == COMMAND_WORDS || left == 0 {
            cut = true;
            break;
        }
        let word = arg.to_string_lossy();
        let mut end = word.len().min(left);
        while !word.is_char_boundary(end) {
            end -= 1;
        }
        left -= end;
        words.push(word[..end].to_string());
        if end < word.len() {
            cut = true;
            break;
        }
    }
    (words, cut)
}

/// The kernel's estimate of the wall clock's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockError {
    /// Estimated error, µs (`timex.esterror`).
    pub esterror_us: i64,
    /// Maximum error, µs (`timex.maxerror`).
    pub maxerror_us: i64,
    /// Whether the kernel considers the clock synchronised (the state is
    /// not `TIME_ERROR`).
    pub synchronized: bool,
}

/// Reads the clock's error estimate with `adjtimex` in read-only mode
/// (`modes` 0), or `None` when the call fails.
pub fn clock_error() -> Option<ClockError> {
    // SAFETY: timex is plain data; all-zero is a valid read-only request.
    let mut timex: libc::timex = unsafe { std::mem::zeroed() };
    timex.modes = 0;
    // SAFETY: `timex` is a valid, writable timex.
    let state = unsafe { libc::adjtimex(&mut timex) };
    (state >= 0).then_some(ClockError {
        esterror_us: timex.esterror as i64,
        maxerror_us: timex.maxerror as i64,
        synchronized: state != libc::TIME_ERROR,
    })
}

/// The `args` of the `perfflow_process` metadata, as JSON.
pub fn metadata(
    host: &str,
    exe: &str,
    rank: Option<u64>,
    command: &(Vec<String>, bool),
    epoch: &Epoch,
    error: Option<ClockError>,
    labels: &[(String, String)],
) -> String {
    let mut clock = Map::new();
    clock.insert("realtime_ns".into(), json!(epoch.real0_ns));
    clock.insert("monotonic_ns".into(), json!(epoch.mono0_ns));
    if let Some(error) = error {
        clock.insert("esterror_us".into(), json!(error.esterror_us));
        clock.insert("maxerror_us".into(), json!(error.maxerror_us));
        clock.insert("synchronized".into(), json!(error.synchronized));
    }
    let mut args = Map::new();
    args.insert("host".into(), json!(host));
    args.insert("exe".into(), json!(exe));
    if let Some(rank) = rank {
        args.insert("rank".into(), json!(rank));
    }
    args.insert("command".into(), json!(command.0));
    if command.1 {
        args.insert("command_cut".into(), json!(true));
    }
    args.insert("clock".into(), Value::Object(clock));
    if !labels.is_empty() {
        let labels = labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        args.insert("labels".into(), Value::Object(labels));
    }
    Value::Object(args).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn the_first_rank_variable_set_wins() {
        assert_eq!(
            rank_from(env(&[("SLURM_PROCID", "5"), ("PMI_RANK", "3")])),
            Some(3)
        );
        assert_eq!(rank_from(env(&[("FLUX_TASK_RANK", "12")])), Some(12));
        assert_eq!(rank_from(env(&[])), None);
    }

    #[test]
    fn a_rank_that_is_not_a_number_is_passed_over() {
        assert_eq!(
            rank_from(env(&[("PMIX_RANK", "x"), ("SLURM_PROCID", "2")])),
            Some(2)
        );
        assert_eq!(rank_from(env(&[("PMI_RANK", "-1")])), None);
    }

    #[test]
    fn the_metadata_holds_the_clock_pairing_and_error() {
        let error = ClockError {
            esterror_us: 16,
            maxerror_us: 250,
            synchronized: true,
        };
        let command = (vec!["./app".to_string(), "-n".to_string()], false);
        let labels = [("fs".to_string(), "shm".to_string())];
        let text = metadata(
            "n\"1",
            "app",
            Some(4),
            &command,
            &Epoch::new(10, 20),
            Some(error),
            &labels,
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value,
            json!({"host": "n\"1", "exe": "app", "rank": 4, "command": ["./app", "-n"],
                "clock": {"realtime_ns": 20, "monotonic_ns": 10, "esterror_us": 16,
                "maxerror_us": 250, "synchronized": true}, "labels": {"fs": "shm"}})
        );
        let text = metadata(
            "n",
            "app",
            None,
            &(vec![], true),
            &Epoch::new(1, 2),
            None,
            &[],
        );
        assert_eq!(
            text,
            r#"{"clock":{"monotonic_ns":1,"realtime_ns":2},"command":[],"command_cut":true,"exe":"app","host":"n"}"#
        );
    }

    #[test]
    fn the_command_line_is_bounded_in_words_and_bytes() {
        let args = |words: &[&str]| words.iter().map(|w| w.into()).collect::<Vec<_>>();
        assert_eq!(
            command_line(args(&["./app", "-n", "4"])),
            (vec!["./app".into(), "-n".into(), "4".into()], false)
        );
        let many: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let (words, cut) = command_line(many.iter().map(|w| w.into()));
        assert_eq!((words.len(), cut), (COMMAND_WORDS, true));
        let long = "é".repeat(COMMAND_BYTES);
        let (words, cut) = command_line(args(&["./app", &long, "next"]));
        assert!(cut);
        assert_eq!(words.len(), 2);
        let bytes = words[0].len() + words[1].len();
        assert!(
            bytes <= COMMAND_BYTES && bytes + 1 >= COMMAND_BYTES,
            "{bytes}"
        );
        assert!(words[1].chars().all(|c| c == 'é'));
    }
}
