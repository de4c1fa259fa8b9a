//! A signal handler that records events while it interrupts the same
//! thread's recording never overwrites a record: each event is either in
//! the trace or counted in `events_dropped`.

mod support;

use support::{command, program, run, Scratch, Trace};

#[test]
fn every_event_of_a_thread_and_of_its_signal_handler_is_written_or_counted() {
    let dir = Scratch::new("handler-reentry");
    let done = run(command(
        &program("signal_handler_records_inside_recording"),
        &dir.path,
    )
    .arg("300000"));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let pairs: u64 = done
        .printed("pairs")
        .and_then(|p| p.parse().ok())
        .expect("pairs");
    let handled: u64 = done
        .printed("handled")
        .and_then(|p| p.parse().ok())
        .expect("handled");
    assert!(handled > 0, "the timer never fired");
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    let trace = Trace::read(&dir.join(&name));
    let written = trace.body().len() as u64;
    let summary = trace.summary();
    let dropped = summary["events_dropped"].as_u64().expect("events_dropped");
    assert_eq!(
        written + dropped,
        2 * pairs + 2 * handled,
        "{written} events written and {dropped} dropped of {} recorded",
        2 * pairs + 2 * handled
    );
    let work = trace.named("work").len() as u64;
    assert!(
        work + dropped >= 2 * pairs,
        "{work} work events, {dropped} dropped"
    );
}
