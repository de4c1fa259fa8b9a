//! A signal handler that records while it interrupts the same thread's
//! recording must leave a trace our tools accept: on each thread, events in
//! file order never go back in time and every end closes the innermost open
//! slice. An event whose timestamp was taken before the handler ran must
//! not land after the handler's events (`check` would report one problem
//! per signal).

mod support;

use support::{command, program, run, Scratch, Trace};

fn handler_events_keep_the_thread_in_order(options: &str, pairs: u32) {
    let tag: String = options
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = Scratch::new(&format!("handler-order-{tag}"));
    let done = run(command(
        &program("signal_handler_records_inside_recording"),
        &dir.path,
    )
    .arg(pairs.to_string())
    .env("PERFFLOW_OPTIONS", options));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let handled = done.printed("handled").expect("handled printed");
    assert_ne!(handled, "0", "the timer never fired");
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    let trace = Trace::read(&dir.join(&name));
    // Usage counter samples are stamped at their slice's begin and written
    // at its end, after what was nested in it: the order is judged on the
    // slices.
    let open = support::assert_stack_order(trace.events.iter().filter(|e| e.ph() != "C"));
    assert!(
        open.values().all(Vec::is_empty),
        "slices left open: {open:?}"
    );
    trace.assert_fields(done.pid());
}

#[test]
fn with_plain_events() {
    handler_events_keep_the_thread_in_order("log-enable=True", 300_000);
}

#[test]
fn with_usage_payloads() {
    // Each event reads the thread's CPU time (a system call): fewer pairs.
    handler_events_keep_the_thread_in_order("cpu-mem-usage=True", 20_000);
}

#[test]
fn with_the_monotonic_clock() {
    // The hot path of the TSC clock and that of clock_gettime guard the
    // store each in its own way.
    handler_events_keep_the_thread_in_order("clock=monotonic", 300_000);
}
