//! SIGTERM while 64 threads record without pause: the final flush completes
//! the trace with what was recorded when the signal came (events recorded
//! after it, while the runtime holds the process's end back, are counted as
//! dropped), or, when it cannot format everything in the time the signal
//! handler waits, completes it without the rest. Either way the file ends
//! with `]` and the runtime summary, every line is a complete event, and one
//! stderr line gives the count of events not in the trace.

mod support;

use std::fs;
use std::time::Duration;

use support::{command, pfw_names, program, read_event_line, start_until_ready, Scratch};

const DEATH_LIMIT: Duration = Duration::from_secs(30);

#[test]
fn sigterm_while_64_threads_record_leaves_a_trace_of_complete_lines() {
    let dir = Scratch::new("sigterm-64-busy");
    let running =
        start_until_ready(command(&program("busy_threads_until_killed"), &dir.path).arg("64"));
    let pid = running.pid();
    running.send(libc::SIGTERM);
    let done = running.wait(DEATH_LIMIT);
    assert_eq!(done.signal(), Some(libc::SIGTERM), "{}", done.status);
    let name = format!("perfflow.array.{}.{pid}.pfw", done.host());
    assert_eq!(pfw_names(&dir.path), [name.as_str()]);
    let text = fs::read_to_string(dir.join(&name)).expect("read the trace");
    assert!(
        text.ends_with("\n]\n"),
        "the trace has no end; last bytes: {:?}\nstderr: {}",
        &text[text.len().saturating_sub(200)..],
        done.stderr
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "[");
    let (last, body) = lines[1..lines.len() - 1]
        .split_last()
        .expect("at least the summary");
    let mut written = 0u64;
    for (i, line) in body.iter().enumerate() {
        let object = line
            .strip_suffix(',')
            .unwrap_or_else(|| panic!("line {} does not end with a comma: {line}", i + 2));
        let event = read_event_line(object, i % 1000 == 0);
        assert_eq!(event.pid, u64::from(pid));
        if event.ph != "M" {
            written += 1;
        }
    }
    let summary = read_event_line(last, true);
    assert_eq!(summary.name, "perfflow_runtime", "{last}");
    let value: serde_json::Value = serde_json::from_str(last).expect("summary");
    assert_eq!(value["args"]["events_written"], written, "{last}");
    let dropped = value["args"]["events_dropped"].as_u64().expect("dropped");
    if dropped > 0 {
        assert!(
            done.stderr
                .contains(&format!("perfflow: {dropped} events are not in the trace")),
            "{dropped} events dropped and no word on stderr: {}",
            done.stderr
        );
    }
    assert_eq!(
        done.stderr.lines().count(),
        usize::from(dropped > 0),
        "{}",
        done.stderr
    );
}

/// Two SIGTERMs at once (a launcher forwarding one while the batch system
/// signals the process group): the second, taken by another thread while
/// the first one's handler completes the trace, waits for it rather than
/// end the process with the trace cut short.
#[test]
fn a_second_sigterm_during_the_completion_waits_for_it() {
    for round in 0..3 {
        let dir = Scratch::new(&format!("sigterm-twice-{round}"));
        let running =
            start_until_ready(command(&program("busy_threads_until_killed"), &dir.path).arg("8"));
        let pid = running.pid();
        running.send(libc::SIGTERM);
        running.send(libc::SIGTERM);
        let done = running.wait(DEATH_LIMIT);
        assert_eq!(done.signal(), Some(libc::SIGTERM), "{}", done.status);
        let name = format!("perfflow.array.{}.{pid}.pfw", done.host());
        let text = fs::read_to_string(dir.join(&name)).expect("read the trace");
        assert!(
            text.ends_with("\n]\n"),
            "round {round}: the trace has no end; last bytes: {:?}\nstderr: {}",
            &text[text.len().saturating_sub(200)..],
            done.stderr
        );
    }
}
