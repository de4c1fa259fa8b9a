//! A program whose threads record while another thread forks may fork
//! while the runtime is starting (the first event of the process). The
//! child must not inherit that start-up half done: its first event would
//! wait forever for a thread that does not exist there. The fork waits for
//! the start to finish; the child then records into a trace of its own.

mod support;

use support::*;

#[test]
fn a_child_forked_during_the_runtimes_start_records_and_exits() {
    let scratch = Scratch::new("fork-during-start");
    let bin = program("fork_while_the_runtime_starts");
    let done = run(&mut command(&bin, &scratch.path));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(
        done.printed("child").as_deref(),
        Some("ok"),
        "stdout: {}\nstderr: {}",
        done.stdout,
        done.stderr
    );
    let child: u32 = done
        .printed("child_pid")
        .and_then(|p| p.parse().ok())
        .expect("child pid printed");
    let host = done.host();
    let parent = Trace::read(&scratch.join(&format!("perfflow.array.{host}.{}.pfw", done.pid())));
    parent.assert_complete(done.pid());
    assert_eq!(parent.named("first").len(), 2);
    let child_trace = Trace::read(&scratch.join(&format!("perfflow.array.{host}.{child}.pfw")));
    child_trace.assert_complete(child);
    assert_eq!(child_trace.named("in_child").len(), 2);
    assert!(child_trace.named("first").is_empty());
}
