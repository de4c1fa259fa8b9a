//! `perfflow-trace … | head`: when the reader of its output stops early,
//! the tool ends as other Unix filters do, through SIGPIPE, with nothing
//! on stderr (rather than an error about a broken pipe and status 1).

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A trace of 20,000 functions, one call each: every report on it is far
/// longer than a pipe holds.
fn many_functions() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("perfflow-trace-early-reader");
    std::fs::create_dir_all(&dir).expect("create test directory");
    let path = dir.join("many.pfw");
    let events: Vec<String> = (0..20_000)
        .map(|i| {
            format!(
                "{{\"name\":\"function_{i}\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":{},\"dur\":2}}",
                i * 3
            )
        })
        .collect();
    std::fs::write(&path, format!("[\n{}\n]\n", events.join(",\n"))).expect("write trace file");
    path
}

#[test]
fn a_reader_that_stops_after_one_line_ends_the_tool_quietly() {
    let trace = many_functions();
    for command in ["summary", "profile", "critical-path"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfflow-trace"))
            .arg(command)
            .arg(&trace)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run perfflow-trace");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("read the first line");
        // The reader is gone: the read end of the pipe is closed here.
        let output = child.wait_with_output().expect("wait for perfflow-trace");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!first.is_empty(), "{command}: no output; {stderr}");
        assert!(stderr.is_empty(), "{command}: {stderr}");
        assert_eq!(
            output.status.signal(),
            Some(libc::SIGPIPE),
            "{command}: {:?}",
            output.status
        );
    }
}
