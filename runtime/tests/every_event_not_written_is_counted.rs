//! Every event that does not reach the trace is counted, as one event each
//! (not as records, lines or bytes), in the closing `perfflow_runtime`
//! record where it is known by then, and in `perfflow_dropped_events()`;
//! and each warning says what happens to the event.

mod support;

use support::{command, pfw_files, program, run, Scratch, Trace};

#[test]
fn events_recorded_after_exit_completed_the_trace_are_counted() {
    let dir = Scratch::new("after-exit");
    let done = run(&mut command(
        &program("records_after_exit_completed_the_trace"),
        &dir.path,
    ));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(done.printed("dropped").as_deref(), Some("1000"));
    // Not in the closing record, written before them: one line at the
    // process's very end says so.
    assert_eq!(
        done.stderr.trim_end(),
        "perfflow: 1000 events were recorded after the trace was complete (by exit handlers \
         or static destructors that ran after it, or threads still running) and are not in it"
    );
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    let trace = Trace::read(&dir.join(&name));
    trace.assert_complete(done.pid());
    assert_eq!(trace.named("early").len(), 4);
    assert!(trace.named("late").is_empty());
}

#[test]
fn an_exit_without_a_matching_enter_is_counted_as_dropped() {
    let dir = Scratch::new("stray-exit");
    let done = run(&mut command(&program("misused_regions"), &dir.path));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    let trace = Trace::read(&dir.join(&name));
    trace.assert_complete(done.pid());
    assert!(trace.named("stray").is_empty());
    assert_eq!(trace.summary()["events_dropped"], 1);
    assert_eq!(done.printed("dropped").as_deref(), Some("1"));
}

#[test]
fn misuse_warnings_say_what_happens_to_the_event() {
    let dir = Scratch::new("misuse-words");
    let done = run(&mut command(&program("misused_regions"), &dir.path));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let line = |what: &str| {
        done.stderr
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no warning about {what}: {}", done.stderr))
            .to_string()
    };
    let stray = line("`stray`");
    assert!(stray.contains("dropped"), "{stray}");
    let unbalanced = line("`outer`");
    assert!(!unbalanced.contains("dropped"), "{unbalanced}");
    assert!(unbalanced.contains("closed"), "{unbalanced}");
    // What the warning says is what the trace holds: outer and the inner
    // slice it closed are both there.
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    let trace = Trace::read(&dir.join(&name));
    let phases = trace.phases_on(u64::from(done.pid()));
    let got: Vec<(&str, &str)> = phases
        .iter()
        .map(|(n, p)| (n.as_str(), p.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("outer", "B"),
            ("inner", "B"),
            ("inner", "E"),
            ("outer", "E"),
            ("fine", "B"),
            ("fine", "E")
        ]
    );
}

#[test]
fn events_lost_to_a_full_file_system_are_counted_one_by_one() {
    let dir = Scratch::new("full-disk");
    // The file may not grow past 3 MB (a full disk, deterministically);
    // 400 000 events need about 26 MB.
    let done = run(
        command(&program("trace_file_hits_its_size_limit"), &dir.path).args(["3000000", "200000"]),
    );
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let recorded: u64 = done
        .printed("recorded")
        .and_then(|v| v.parse().ok())
        .expect("recorded");
    let dropped: u64 = done
        .printed("dropped")
        .and_then(|v| v.parse().ok())
        .expect("dropped");
    let files = pfw_files(&dir.path);
    assert_eq!(files.len(), 1, "{files:?}");
    let bytes = std::fs::read(&files[0]).expect("read the trace");
    assert!(bytes.len() <= 3_000_000);
    let text = String::from_utf8_lossy(&bytes);
    // Events in the file: complete lines (the last one may have been cut by
    // the limit) other than metadata.
    let written = text
        .split('\n')
        .skip(1)
        .filter(|l| {
            let object = l.strip_suffix(',').unwrap_or(l);
            serde_json::from_str::<serde_json::Value>(object).is_ok_and(|v| v["ph"] != "M")
        })
        .count() as u64;
    assert!(written > 0 && written < recorded, "{written} of {recorded}");
    assert_eq!(
        written + dropped,
        recorded,
        "{written} events in the file and {dropped} counted as dropped"
    );
    assert!(
        done.stderr.contains("cannot write the trace"),
        "stderr: {}",
        done.stderr
    );
}
