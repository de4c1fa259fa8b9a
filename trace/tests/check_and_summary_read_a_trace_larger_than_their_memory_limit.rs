//! `check` and `summary` stream a trace: run with an address-space limit
//! of the tool's own image plus 24 MiB, on a trace larger than a third of
//! that limit, they still read all of it. (Reading the whole file into
//! memory first needs about four times its size.)

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `ulimit -v` for the tool, in KiB: its executable's size (what mapping
/// it takes, which grows with the tool) plus 24 MiB for libraries, stacks
/// and what it reads.
fn limit_kib() -> usize {
    let tool = std::fs::metadata(env!("CARGO_BIN_EXE_perfflow-trace")).expect("the tool's size");
    tool.len() as usize / 1024 + 24 * 1024
}

/// Pairs of events per thread: each pair takes about 210 bytes and there
/// are two threads, so the trace is larger than a third of the limit.
fn event_pairs() -> usize {
    limit_kib() * 1024 / 3 / 400 + 1_000
}

/// Writes a trace of nested B/E pairs on two threads (over a third of
/// the limit) and returns its path.
fn big_trace() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("perfflow-trace-memory-limit");
    std::fs::create_dir_all(&dir).expect("create test directory");
    let path = dir.join("big.pfw");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create trace"));
    let mut line = String::new();
    writeln!(file, "[").expect("write");
    for tid in [1, 2] {
        writeln!(
            file,
            "{{\"name\":\"main\",\"cat\":\"app.c\",\"pid\":7,\"tid\":{tid},\"ts\":1700000000000000.000,\"ph\":\"B\"}},"
        )
        .expect("write");
        for pair in 0..event_pairs() {
            line.clear();
            let ts = 1_700_000_000_000_001 + 2 * pair;
            for (ph, at) in [("B", ts), ("E", ts + 1)] {
                writeln!(
                    line,
                    "{{\"name\":\"compute_step_with_a_long_name\",\"cat\":\"app.c\",\"pid\":7,\"tid\":{tid},\"ts\":{at}.250,\"ph\":\"{ph}\"}},"
                )
                .expect("format");
            }
            file.write_all(line.as_bytes()).expect("write");
        }
        writeln!(
            file,
            "{{\"name\":\"main\",\"cat\":\"app.c\",\"pid\":7,\"tid\":{tid},\"ts\":1700000001000000.000,\"ph\":\"E\"}},"
        )
        .expect("write");
    }
    writeln!(
        file,
        "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":1,\"args\":{{\"name\":\"main\"}}}}\n]"
    )
    .expect("write");
    file.flush().expect("flush");
    path
}

/// Runs the tool under `ulimit -v` of [`limit_kib`].
fn limited(args: &[&str], file: &Path) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$@\"", limit_kib()))
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_perfflow-trace"))
        .args(args)
        .arg(file)
        .output()
        .expect("run perfflow-trace")
}

#[test]
fn check_and_summary_read_a_trace_larger_than_their_memory_limit() {
    let file = big_trace();
    let size = std::fs::metadata(&file).expect("trace size").len();
    assert!(
        size > (limit_kib() as u64) * 1024 / 3,
        "trace of {size} bytes"
    );
    let events = 2 * (2 * event_pairs() + 2);

    let output = limited(&["check"], &file);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("{}: ok, {events} events, 2 threads\n", file.display())
    );

    let output = limited(&["summary"], &file);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with(&format!("processes: 1, threads: 2, events: {events}, ")),
        "{stdout}"
    );
    let calls = 2 * event_pairs();
    assert!(
        stdout.contains(&format!("\ncompute_step_with_a_long_name  {calls}  ")),
        "{stdout}"
    );
    std::fs::remove_file(&file).expect("remove the trace");
}
