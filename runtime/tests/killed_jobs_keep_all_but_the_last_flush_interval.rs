//! A job killed in a way no handler sees (SIGKILL, the OOM killer) keeps
//! every event recorded up to one `flush-interval` before the kill: the
//! file's opening is written when it is created, and the writer thread
//! writes each thread's published records at least once per interval. A
//! forked child killed by a signal the runtime takes leaves a complete
//! trace of its own.

mod support;

use std::fs;
use std::time::{Duration, Instant};

use serde_json::Value;

use support::{command, pfw_names, program, start_until_ready, Scratch, Trace};

const DEATH_LIMIT: Duration = Duration::from_secs(20);

/// The events of a trace that may have been cut short: `[` on the first
/// line, then one complete JSON object per line (the last one may lack its
/// comma and newline). Panics on anything else.
fn read_prefix(text: &str) -> Vec<Value> {
    let mut lines = text.split('\n');
    assert_eq!(lines.next(), Some("["), "first line of {text:?}");
    let mut events = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let object = line.strip_suffix(',').unwrap_or(line);
        let value: Value = serde_json::from_str(object)
            .unwrap_or_else(|e| panic!("not a complete event line ({e}): {line:?}"));
        events.push(value);
    }
    events
}

fn count(events: &[Value], name: &str, ph: &str) -> usize {
    events
        .iter()
        .filter(|e| e["name"] == name && e["ph"] == ph)
        .count()
}

#[test]
fn a_process_killed_right_after_its_first_event_leaves_the_opening_of_its_trace() {
    let dir = Scratch::new("killed-at-once");
    let running = start_until_ready(command(&program("e2e_killed"), &dir.path).arg("0"));
    let pid = running.pid();
    running.send(libc::SIGKILL);
    let done = running.wait(DEATH_LIMIT);
    assert_eq!(done.signal(), Some(libc::SIGKILL), "{}", done.status);
    let name = format!("perfflow.array.{}.{pid}.pfw", done.host());
    assert_eq!(pfw_names(&dir.path), [name.as_str()]);
    let text = fs::read_to_string(dir.join(&name)).expect("read the trace");
    let events = read_prefix(&text);
    assert!(!events.is_empty(), "the file holds only {text:?}");
    assert_eq!(events[0]["name"], "process_name", "{text}");
    assert_eq!(events[0]["pid"], pid, "{text}");
}

#[test]
fn sigkill_leaves_every_event_recorded_one_flush_interval_before() {
    let dir = Scratch::new("killed-after-interval");
    let running = start_until_ready(
        command(&program("e2e_killed"), &dir.path)
            .arg("5")
            .env("PERFFLOW_OPTIONS", "flush-interval=50ms"),
    );
    let pid = running.pid();
    // The program recorded its events and went idle: within a few flush
    // intervals they reach the file. The test waits for them as long as a
    // loaded machine may need; it never judges the interval itself.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut events = Vec::new();
    while Instant::now() < deadline {
        if let Some(file) = support::pfw_files(&dir.path).first() {
            let text = fs::read_to_string(file).unwrap_or_default();
            if text.ends_with('}') || text.ends_with(",\n") {
                events = read_prefix(&text);
                if count(&events, "wait", "B") == 1 {
                    break;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    running.send(libc::SIGKILL);
    let done = running.wait(DEATH_LIMIT);
    assert_eq!(done.signal(), Some(libc::SIGKILL), "{}", done.status);
    assert_eq!(
        count(&events, "wait", "B"),
        1,
        "the events recorded before the program went idle never reached the file: {events:?}"
    );
    let name = format!("perfflow.array.{}.{pid}.pfw", done.host());
    let text = fs::read_to_string(dir.join(&name)).expect("read the trace");
    let events = read_prefix(&text);
    assert_eq!(events[0]["name"], "process_name");
    assert_eq!(count(&events, "work", "B"), 5);
    assert_eq!(count(&events, "work", "E"), 5);
    assert_eq!(count(&events, "wait", "B"), 1);
    assert!(events.iter().all(|e| e["pid"] == pid));
}

#[test]
fn a_forked_child_killed_by_sigterm_leaves_a_complete_trace() {
    forked_child_killed_by(libc::SIGTERM, "fork-sigterm");
}

#[test]
fn a_forked_child_killed_by_sigabrt_leaves_a_complete_trace() {
    forked_child_killed_by(libc::SIGABRT, "fork-sigabrt");
}

/// Runs `fork_child_waits_for_a_signal`, sends `sig` (a signal the runtime
/// takes by default) to the child once it has recorded its events, and
/// checks the child's trace.
fn forked_child_killed_by(sig: libc::c_int, test: &str) {
    let dir = Scratch::new(test);
    let running = start_until_ready(&mut command(
        &program("fork_child_waits_for_a_signal"),
        &dir.path,
    ));
    let child: i32 = running
        .printed("child")
        .and_then(|c| c.parse().ok())
        .expect("child pid printed");
    // SAFETY: kill() with the pid of the program's child, which the
    // program waits for.
    assert_eq!(unsafe { libc::kill(child, sig) }, 0);
    let done = running.wait(DEATH_LIMIT);
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(
        done.printed("child_signal").as_deref(),
        Some(sig.to_string().as_str()),
        "the child still ends by the signal"
    );
    let name = format!("perfflow.array.{}.{child}.pfw", done.host());
    assert!(
        pfw_names(&dir.path).contains(&name),
        "no trace of the child: {:?}\nstderr: {}",
        pfw_names(&dir.path),
        done.stderr
    );
    let trace = Trace::read(&dir.join(&name));
    trace.assert_complete(child as u32);
    let child_tid = child as u64;
    let phases = trace.phases_on(child_tid);
    let work = phases.iter().filter(|(n, _)| n == "child_work").count();
    assert_eq!(work, 6, "three calls: {phases:?}");
    assert_eq!(
        phases.last().map(|(n, p)| (n.as_str(), p.as_str())),
        Some(("child_wait", "E")),
        "the slice the child was killed in is closed: {phases:?}"
    );
}
