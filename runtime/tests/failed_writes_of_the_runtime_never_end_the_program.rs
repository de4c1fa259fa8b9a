//! A write of the runtime's that fails never ends the program: neither a
//! trace that outgrows the file size limit (`ulimit -f`: SIGXFSZ, whose
//! default action ends the process) nor a warning written to a stderr
//! that is a pipe nobody reads any more (SIGPIPE), whichever thread
//! writes: the program's own at its first event and in the final flush at
//! exit, or the writer thread. Nor does a trace that reaches its own
//! limits, `max-trace-size` and `min-free-space`, which stop it before the
//! write that would pass them. See `tests/c/trace_file_hits_its_size_limit.c`.

mod support;

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use support::{command, program, run, Finished, Scratch};

fn size_limited(dir: &Scratch, format: &str, limit: u64, pairs: u64) -> Command {
    let mut cmd = command(&program("trace_file_hits_its_size_limit"), &dir.path);
    cmd.args([limit.to_string(), pairs.to_string(), "SIGXFSZ".to_string()])
        .env("PERFFLOW_OPTIONS", format!("log-format={format}"));
    cmd
}

/// The program ran to its end and printed what it recorded, of which
/// some events were counted as dropped.
fn assert_ran_to_its_end(done: &Finished, what: &str) {
    assert!(
        done.status.success(),
        "{what}: {} (signal {:?}); stdout: {}; stderr: {}",
        done.status,
        done.signal(),
        done.stdout,
        done.stderr
    );
    let number = |key: &str| -> u64 {
        done.printed(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{what}: no {key}; stdout: {}", done.stdout))
    };
    let (recorded, dropped) = (number("recorded"), number("dropped"));
    assert!(
        dropped > 0 && dropped <= recorded,
        "{what}: {dropped} of {recorded} dropped"
    );
}

/// Limits and lengths that make the first failing write happen on each
/// thread that writes: the program's thread creating the trace (its
/// opening does not fit), the program's thread in the final flush at exit
/// (a short run, written only then), the writer thread (a long run).
const CASES: [(&str, u64, u64); 3] = [
    ("the opening", 100, 1_000),
    ("the final flush", 20_000, 5_000),
    ("the writer thread", 3_000_000, 400_000),
];

#[test]
fn a_trace_past_the_file_size_limit_never_ends_the_program() {
    for format in ["array", "perfetto"] {
        for (case, limit, pairs) in CASES {
            let dir = Scratch::new(&format!("fsize-{format}-{limit}"));
            let done = run(&mut size_limited(&dir, format, limit, pairs));
            let what = format!("{format}, {case}");
            assert_ran_to_its_end(&done, &what);
            assert!(
                done.stderr.contains("File too large"),
                "{what}: stderr: {}",
                done.stderr
            );
            for entry in std::fs::read_dir(&dir.path).expect("scratch dir") {
                let len = entry.expect("entry").metadata().expect("metadata").len();
                assert!(len <= limit, "{what}: a file of {len} bytes");
            }
        }
    }
}

#[test]
fn warnings_to_a_stderr_nobody_reads_never_end_the_program() {
    for format in ["array", "perfetto"] {
        for (case, limit, pairs) in CASES {
            let dir = Scratch::new(&format!("epipe-{format}-{limit}"));
            let mut fds = [0; 2];
            // SAFETY: a pipe into a valid array; each end is owned once.
            let (read, write) = unsafe {
                assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
                (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
            };
            // Nobody will ever read the program's stderr.
            drop(read);
            let output = size_limited(&dir, format, limit, pairs)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::from(write))
                .output()
                .expect("run the program");
            let done = Finished::from_output(output);
            assert_ran_to_its_end(&done, &format!("{format}, {case}, stderr a closed pipe"));
        }
    }
}

/// `max-trace-size` and `min-free-space` stop writing before the file or
/// the disk would pass them, wherever the first write that would is made:
/// the file stays within the size, the program runs to its end, one line
/// on stderr names the option, and the events not written are counted.
#[test]
fn a_trace_stops_before_its_size_and_free_space_limits() {
    for format in ["array", "perfetto"] {
        for (case, pairs) in [("the final flush", 5_000), ("the writer thread", 400_000)] {
            let dir = Scratch::new(&format!("max-size-{format}-{pairs}"));
            let mut cmd = command(&program("trace_file_hits_its_size_limit"), &dir.path);
            cmd.args([(1u64 << 40).to_string(), pairs.to_string()]).env(
                "PERFFLOW_OPTIONS",
                format!("log-format={format}:max-trace-size=64K"),
            );
            let done = run(&mut cmd);
            let what = format!("{format}, {case}");
            assert_ran_to_its_end(&done, &what);
            assert!(
                done.stderr
                    .contains("would pass max-trace-size, 64 KiB (65536 bytes)"),
                "{what}: stderr: {}",
                done.stderr
            );
            assert_eq!(
                done.stderr.matches("max-trace-size").count(),
                1,
                "{what}: stderr: {}",
                done.stderr
            );
            for entry in std::fs::read_dir(&dir.path).expect("scratch dir") {
                let len = entry.expect("entry").metadata().expect("metadata").len();
                assert!(len <= 64 << 10, "{what}: a file of {len} bytes");
            }
        }
        // A floor no file system can keep: not even the opening is
        // written, the empty file is removed, and the program runs as it
        // would untraced.
        let dir = Scratch::new(&format!("min-free-{format}"));
        let mut cmd = command(&program("trace_file_hits_its_size_limit"), &dir.path);
        cmd.args([(1u64 << 40).to_string(), "1000".to_string()])
            .env(
                "PERFFLOW_OPTIONS",
                format!("log-format={format}:min-free-space=99999T"),
            );
        let done = run(&mut cmd);
        assert_ran_to_its_end(&done, &format!("{format}, min-free-space"));
        assert!(
            done.stderr.contains("min-free-space keeps 99999 TiB"),
            "{format}: stderr: {}",
            done.stderr
        );
        let left: Vec<_> = std::fs::read_dir(&dir.path)
            .expect("scratch dir")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert!(left.is_empty(), "{format}: {left:?} left behind");
    }
}
