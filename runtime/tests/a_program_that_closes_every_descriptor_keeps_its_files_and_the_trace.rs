//! A program that closes every descriptor from 3 up and opens files of its
//! own (which take the numbers the runtime's descriptors had) keeps exactly
//! its own data in them; the runtime opens its trace again and completes
//! it, and its signal watcher neither reads the program's files nor spins
//! on a closed descriptor. See `tests/c/closes_every_descriptor.c`.

mod support;

use support::{command, pfw_names, program, run, Finished, Scratch, Trace};

const EVENTS: usize = 30_000;

fn trace_of(dir: &Scratch, done: &Finished) -> Trace {
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    assert_eq!(pfw_names(&dir.path), [name.as_str()], "trace files");
    Trace::read(&dir.join(&name))
}

/// The program's files hold exactly what it wrote, read back by the
/// program from its offsets and here from disk.
fn assert_own_files_intact(dir: &Scratch, done: &Finished) {
    assert_eq!(
        done.printed("files_intact").as_deref(),
        Some("1"),
        "stdout: {}; stderr: {}",
        done.stdout,
        done.stderr
    );
    for i in 0..12 {
        let got = std::fs::read(dir.join(&format!("own{i}.dat"))).expect("own file");
        let want = format!("own file {i}: data of the program only\n");
        assert_eq!(String::from_utf8_lossy(&got), want, "own{i}.dat");
    }
}

/// Runs the program with `args` (and `PERFFLOW_OPTIONS=options`), expects
/// it to return 0 with its files intact.
fn run_to_its_end(dir: &Scratch, args: [&str; 2], options: &str) -> Finished {
    let done = run(command(&program("closes_every_descriptor"), &dir.path)
        .args(args)
        .env("PERFFLOW_OPTIONS", options));
    assert!(
        done.status.success(),
        "{}; stderr: {}",
        done.status,
        done.stderr
    );
    assert_own_files_intact(dir, &done);
    done
}

fn assert_every_event_in_the_trace(trace: &Trace, done: &Finished) {
    trace.assert_complete(done.pid());
    assert_every_slice_in_the_trace(trace);
}

fn assert_every_slice_in_the_trace(trace: &Trace) {
    for name in ["before", "after"] {
        let begins = trace.named(name).iter().filter(|e| e.ph() == "B").count();
        assert_eq!(begins, EVENTS, "{name} slices");
    }
    assert_eq!(trace.summary()["events_dropped"], 0);
}

fn closes_and_exits(how: &str) {
    let dir = Scratch::new(&format!("closes-{how}"));
    let done = run_to_its_end(&dir, [how, "exit"], "");
    assert_eq!(
        done.printed("watcher_slept").as_deref(),
        Some("1"),
        "the watcher blocks in poll; stderr: {}",
        done.stderr
    );
    let trace = trace_of(&dir, &done);
    assert_every_event_in_the_trace(&trace, &done);
    let lines: Vec<&str> = done.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr: {}", done.stderr);
    assert!(
        lines[0].contains("closed or replaced the trace's descriptor")
            && lines[0].contains("opened again"),
        "{}",
        lines[0]
    );
}

#[test]
fn closing_every_descriptor_in_a_loop_leaves_the_programs_files_and_a_complete_trace() {
    closes_and_exits("loop");
}

#[test]
fn closefrom_leaves_the_programs_files_and_a_complete_trace() {
    closes_and_exits("closefrom");
}

#[test]
fn a_daemon_that_also_changes_directory_keeps_a_complete_trace() {
    // The trace was created by a relative name in the directory the program
    // left: it is opened again where it was created.
    let dir = Scratch::new("closes-chdir");
    let done = run(
        command(&program("closes_every_descriptor"), &dir.path).args([
            "closefrom",
            "exit",
            "chdir",
        ]),
    );
    assert!(
        done.status.success(),
        "{}; stderr: {}",
        done.status,
        done.stderr
    );
    assert_eq!(
        done.printed("files_intact").as_deref(),
        Some("1"),
        "{}",
        done.stdout
    );
    assert!(
        dir.join("sub/own0.dat").exists(),
        "the program's files are in sub/"
    );
    let trace = trace_of(&dir, &done);
    assert_every_event_in_the_trace(&trace, &done);
    assert!(
        done.stderr.contains("opened again"),
        "stderr: {}",
        done.stderr
    );
}

#[test]
fn sigterm_after_closefrom_still_completes_the_trace() {
    let dir = Scratch::new("closes-sigterm");
    let done =
        run(command(&program("closes_every_descriptor"), &dir.path).args(["closefrom", "sigterm"]));
    assert_eq!(
        done.signal(),
        Some(libc::SIGTERM),
        "{}; stderr: {}",
        done.status,
        done.stderr
    );
    assert_own_files_intact(&dir, &done);
    let trace = trace_of(&dir, &done);
    assert_every_event_in_the_trace(&trace, &done);
}

/// The metric sampler keeps `/proc` files and perf counters open: after the
/// close it reads none of the program's files and samples on.
#[test]
fn the_metric_sampler_never_reads_the_programs_files_and_samples_on() {
    let dir = Scratch::new("closes-sampler");
    let done = run_to_its_end(
        &dir,
        ["closefrom", "exit"],
        "sampler=True:sampler-interval=50ms",
    );
    let trace = trace_of(&dir, &done);
    // Counter samples share the process's tid with the main thread's
    // slices, so the stack-order check of `assert_complete` does not apply.
    assert_every_slice_in_the_trace(&trace);
    // Samples taken after the close (which came after the last "before"
    // slice) are in the trace.
    let closed_at = trace
        .named("before")
        .iter()
        .map(|e| e.ts())
        .max()
        .expect("before slices");
    let later = trace
        .body()
        .iter()
        .filter(|e| e.ph() == "C" && e.ts() > closed_at)
        .count();
    assert!(later > 0, "no counter sample after the close");
}

/// With the descriptors closed and nothing opened in their place, the
/// watcher must not loop on the closed descriptor: it sleeps in poll.
#[test]
fn a_watcher_whose_pipe_was_closed_sleeps_instead_of_spinning() {
    let dir = Scratch::new("closes-only");
    let done =
        run(command(&program("closes_every_descriptor"), &dir.path)
            .args(["closefrom", "close-only"]));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(
        done.printed("watcher_slept").as_deref(),
        Some("1"),
        "stderr: {}",
        done.stderr
    );
}
