//! Two threads call `exit()` at the same moment. glibc runs each exit
//! handler once, on whichever thread takes it first: the thread that did
//! not take the runtime's final flush went on to end the process while the
//! other was still completing the trace, which was left cut short. The
//! runtime's handler is registered twice, so that thread now waits for the
//! completion instead.

mod support;

use std::time::Duration;

use support::{command, pfw_names, program, spawn, Scratch, Trace};

const THREADS: u64 = 4;
const PAIRS: u64 = 10_000;

#[test]
fn two_threads_calling_exit_at_once_leave_a_complete_trace() {
    for round in 0..2 {
        let dir = Scratch::new(&format!("two-exits-{round}"));
        // Nothing is written before the end: the final flush has every
        // record to format.
        let running = spawn(
            command(&program("two_threads_call_exit"), &dir.path)
                .args([THREADS.to_string(), PAIRS.to_string()])
                .env("PERFFLOW_OPTIONS", "flush-interval=1h"),
        );
        let done = running.wait(Duration::from_secs(60));
        assert_eq!(
            done.status.code(),
            Some(0),
            "round {round}: {}",
            done.stderr
        );
        let pid = done.pid();
        let name = format!("perfflow.array.{}.{pid}.pfw", done.host());
        assert_eq!(pfw_names(&dir.path), [name.as_str()]);
        let trace = Trace::read(&dir.join(&name));
        trace.assert_complete(pid);
        assert_eq!(
            trace.named("before_exit").len() as u64,
            2 * THREADS * PAIRS,
            "round {round}: {}",
            done.stderr
        );
        assert_eq!(trace.summary()["events_dropped"], 0, "round {round}");
    }
}
