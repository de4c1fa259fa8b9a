//! Threads that come and go: hundreds of short threads, a few alive at a
//! time, each ending before its chunk fills while the writer thread is busy
//! formatting. Every exiting thread hands its chunk to the writer; the
//! record buffers the process holds at once (`buffer_bytes_peak` in the
//! closing record, counted by the runtime) must follow the threads alive,
//! not the threads ever created.

mod support;

use support::*;

const THREADS: u64 = 200;
const ALIVE: u64 = 8;
/// Records per thread: well inside one chunk, so each thread ends with a
/// partly filled chunk to hand over.
const EVENTS: u64 = 2000;
/// One chunk.
const MIB: u64 = 1 << 20;

#[test]
fn record_buffers_follow_the_threads_alive_not_the_threads_created() {
    let scratch = Scratch::new("churn");
    let bin = program("thread_churn");
    let done = run(command(&bin, &scratch.path).args([
        THREADS.to_string(),
        ALIVE.to_string(),
        EVENTS.to_string(),
    ]));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let files = pfw_files(&scratch.path);
    assert_eq!(files.len(), 1, "{files:?}");
    let trace = Trace::read(&files[0]);
    trace.assert_complete(done.pid());
    let peak = trace.summary()["buffer_bytes_peak"]
        .as_u64()
        .expect("buffer_bytes_peak is an integer");
    // Per thread alive (the main thread too): its own chunk, and one more
    // handed over while the writer was at the limit; plus the writer's
    // queue limit, the chunk it formats and the spare chunks it keeps.
    let bound = (2 * (ALIVE + 1) + 4 + 1 + 8) * MIB;
    assert!(
        peak <= bound,
        "{} MiB of record buffers at once for {ALIVE} threads alive ({THREADS} created); \
         at most {} MiB expected",
        peak / MIB,
        bound / MIB
    );
    assert!(peak >= MIB, "at least one chunk was used: {peak}");
}
