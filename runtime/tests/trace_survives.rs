//! End-to-end tests: the trace file survives every way a traced program can
//! end. Each test builds a program from `tests/c/`, runs it in a scratch
//! directory, ends it in one particular way, and parses the trace it leaves
//! with `serde_json`.
//!
//! A program that ends through return from `main`, `exit()`, the last
//! thread after `pthread_exit` in `main`, SIGTERM or SIGABRT (`abort()`, an
//! uncaught C++ exception), or SIGINT with `signals=INT`, leaves a complete
//! trace: one JSON
//! document, slices still open at the end closed, the runtime summary last.
//! SIGKILL cannot be caught; it leaves a truncated trace (see
//! [`sigkill_after_300k_events_leaves_a_truncated_array_of_valid_event_lines`]).

mod support;

use std::fs;
use std::time::Duration;

use serde_json::Value;

use support::{
    command, pfw_names, program, read_event_line, run, start_until_ready, Finished, LineEvent,
    Scratch, Trace,
};

/// How long a signalled program may take to end (the runtime waits at most
/// three seconds for the trace to be completed).
const DEATH_LIMIT: Duration = Duration::from_secs(20);

/// The one trace file `run` left in `dir`, named after its host and pid.
fn trace_of(dir: &Scratch, host: &str, pid: u32) -> Trace {
    let name = format!("perfflow.array.{host}.{pid}.pfw");
    assert_eq!(
        pfw_names(&dir.path),
        [name.as_str()],
        "trace files in the run directory"
    );
    Trace::read(&dir.join(&name))
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, p)| (n.to_string(), p.to_string()))
        .collect()
}

fn count(trace: &Trace, name: &str, ph: &str) -> usize {
    trace
        .named(name)
        .into_iter()
        .filter(|e| e.ph() == ph)
        .count()
}

#[test]
fn returning_from_main_completes_the_trace() {
    let dir = Scratch::new("return");
    let done = run(&mut command(&program("e2e_options"), &dir.path));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(done.printed("sum").as_deref(), Some("4950"));
    let trace = trace_of(&dir, &done.host(), done.pid());
    trace.assert_complete(done.pid());
    let got = trace.phases_on(u64::from(done.pid()));
    assert_eq!(got.len(), 202);
    assert_eq!(got[0], ("main_work".to_string(), "B".to_string()));
    assert_eq!(got[201], ("main_work".to_string(), "E".to_string()));
    assert_eq!(count(&trace, "step", "B"), 100);
    assert_eq!(count(&trace, "step", "E"), 100);
    assert_eq!(trace.summary()["events_dropped"], 0);
}

#[test]
fn exit_inside_open_slices_closes_them_and_completes_the_trace() {
    let dir = Scratch::new("exit-open");
    let done = run(&mut command(&program("e2e_exit_open"), &dir.path));
    assert_eq!(done.status.code(), Some(7), "stderr: {}", done.stderr);
    let trace = trace_of(&dir, &done.host(), done.pid());
    trace.assert_complete(done.pid());
    let main = u64::from(done.pid());
    assert_eq!(
        trace.phases_on(main),
        pairs(&[
            ("outer", "B"),
            ("inner", "B"),
            ("inner", "E"),
            ("outer", "E")
        ])
    );
    let workers: Vec<u64> = trace.tids().into_iter().filter(|t| *t != main).collect();
    assert_eq!(workers.len(), 1, "one blocked worker");
    assert_eq!(
        trace.phases_on(workers[0]),
        pairs(&[("blocked", "B"), ("blocked", "E")])
    );
}

#[test]
fn main_thread_calling_pthread_exit_keeps_the_slices_of_two_threads_that_finish_later() {
    let dir = Scratch::new("pthread-exit");
    let done = run(&mut command(&program("e2e_main_exits_early"), &dir.path));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let trace = trace_of(&dir, &done.host(), done.pid());
    trace.assert_complete(done.pid());
    let main = u64::from(done.pid());
    // main_open is still open when main calls pthread_exit: it ends with
    // the thread.
    assert_eq!(
        trace.phases_on(main),
        pairs(&[("main_open", "B"), ("main_open", "E")])
    );
    let workers: Vec<u64> = trace.tids().into_iter().filter(|t| *t != main).collect();
    assert_eq!(workers.len(), 2, "two workers");
    for tid in workers {
        let got = trace.phases_on(tid);
        assert_eq!(got.len(), 2 + 2 * 500, "events of tid {tid}");
        assert_eq!(got[0], ("worker".to_string(), "B".to_string()));
        assert_eq!(got[got.len() - 1], ("worker".to_string(), "E".to_string()));
    }
}

/// Runs `e2e_wait_for_signal` with `PERFFLOW_OPTIONS=options`, sends `sig`
/// once it is waiting inside its slices, and checks that it died by `sig`
/// leaving a complete trace.
fn killed_inside_slices(test: &str, sig: libc::c_int, options: &str) {
    let dir = Scratch::new(test);
    let mut cmd = command(&program("e2e_wait_for_signal"), &dir.path);
    cmd.env("PERFFLOW_OPTIONS", options);
    let running = start_until_ready(&mut cmd);
    let pid = running.pid();
    running.send(sig);
    let done = running.wait(DEATH_LIMIT);
    assert_eq!(
        done.signal(),
        Some(sig),
        "{}; stderr: {}",
        done.status,
        done.stderr
    );
    assert_eq!(done.pid(), pid);
    let trace = trace_of(&dir, &done.host(), pid);
    trace.assert_complete(pid);

    let main = u64::from(pid);
    let got = trace.phases_on(main);
    assert_eq!(got.len(), 2000 + 4, "main thread events");
    assert_eq!(
        got[2000..],
        pairs(&[("serve", "B"), ("wait", "B"), ("wait", "E"), ("serve", "E")])[..],
        "the slices open at the signal are closed"
    );
    assert!(got[..2000].iter().all(|(name, _)| name == "step"));

    let workers: Vec<u64> = trace.tids().into_iter().filter(|t| *t != main).collect();
    assert_eq!(workers.len(), 1, "one worker thread");
    let worker = trace.phases_on(workers[0]);
    assert_eq!(worker[0], ("worker_loop".to_string(), "B".to_string()));
    assert_eq!(
        worker[worker.len() - 1],
        ("worker_loop".to_string(), "E".to_string())
    );
    assert!(worker[1..worker.len() - 1]
        .iter()
        .all(|(name, _)| name == "tick"));
}

#[test]
fn sigterm_inside_open_slices_ends_the_program_by_sigterm_with_a_complete_trace() {
    killed_inside_slices("sigterm", libc::SIGTERM, "");
}

#[test]
fn sigint_inside_open_slices_with_signals_int_ends_the_program_by_sigint_with_a_complete_trace() {
    killed_inside_slices("sigint", libc::SIGINT, "signals=INT");
}

#[test]
fn abort_inside_open_slices_ends_the_program_by_sigabrt_with_a_complete_trace() {
    let dir = Scratch::new("abort");
    let done = run(&mut command(&program("e2e_abort"), &dir.path));
    assert_eq!(
        done.signal(),
        Some(libc::SIGABRT),
        "{}; stderr: {}",
        done.status,
        done.stderr
    );
    let trace = trace_of(&dir, &done.host(), done.pid());
    trace.assert_complete(done.pid());
    let got = trace.phases_on(u64::from(done.pid()));
    assert_eq!(got.len(), 1 + 20 + 2 + 1);
    assert_eq!(got[0], ("outer".to_string(), "B".to_string()));
    assert_eq!(
        got[21..],
        pairs(&[("fail", "B"), ("fail", "E"), ("outer", "E")])[..]
    );
}

#[test]
fn an_uncaught_cxx_exception_ends_the_program_by_sigabrt_with_a_complete_trace() {
    let dir = Scratch::new("uncaught");
    let done = run(&mut command(&program("e2e_uncaught"), &dir.path));
    assert_eq!(
        done.signal(),
        Some(libc::SIGABRT),
        "{}; stderr: {}",
        done.status,
        done.stderr
    );
    let trace = trace_of(&dir, &done.host(), done.pid());
    trace.assert_complete(done.pid());
    let got = trace.phases_on(u64::from(done.pid()));
    assert_eq!(got.len(), 1 + 20 + 2 + 1);
    assert_eq!(got[0], ("main_work".to_string(), "B".to_string()));
    assert_eq!(
        got[21..],
        pairs(&[("thrower", "B"), ("thrower", "E"), ("main_work", "E")])[..]
    );
}

/// SIGKILL cannot be caught, so nothing completes the trace. The expected
/// form of the file is a truncated array:
///
/// * the first line is `[`, and there is no closing `]`: the file as a
///   whole is JSON that ends too early (a JSON reader reports an unexpected
///   end, not a syntax error);
/// * every line ended by a newline after the first is one complete event
///   followed by `,`; what follows the last newline, if anything, is the
///   beginning of an event line (it may be a complete event, written
///   without its `,` and newline, or cut anywhere);
/// * the events are those of the chunks written before the kill, in order:
///   spans are in stack order on every thread, but may be left open, and
///   the `perfflow_runtime` summary is missing.
///
/// The program records 300 000 events before it waits to be killed, so at
/// least three full chunks of 65 536 records reached the file. The lines
/// are read with [`support::read_event_line`]; every 500th goes through
/// `serde_json`.
#[test]
fn sigkill_after_300k_events_leaves_a_truncated_array_of_valid_event_lines() {
    let dir = Scratch::new("sigkill");
    let running = start_until_ready(&mut command(&program("e2e_killed"), &dir.path));
    let pid = running.pid();
    // Full chunks are formatted by the writer thread in the background:
    // wait until the file stops growing, as it does once the writer has
    // caught up with the idle program.
    wait_until_file_settles(&dir.path);
    running.send(libc::SIGKILL);
    let done = running.wait(DEATH_LIMIT);
    assert_eq!(done.signal(), Some(libc::SIGKILL), "{}", done.status);
    let name = format!("perfflow.array.{}.{pid}.pfw", done.host());
    assert_eq!(pfw_names(&dir.path), [name.as_str()]);
    let text = fs::read_to_string(dir.join(&name)).expect("read the trace");

    assert!(!text.trim_end().ends_with(']'), "no closing bracket");

    let pieces: Vec<&str> = text.split('\n').collect();
    assert_eq!(pieces[0], "[", "first line");
    let (lines, rest) = (&pieces[1..pieces.len() - 1], pieces[pieces.len() - 1]);
    let mut events: Vec<LineEvent> = Vec::with_capacity(lines.len() + 1);
    for (i, line) in lines.iter().enumerate() {
        let object = line
            .strip_suffix(',')
            .unwrap_or_else(|| panic!("line {} does not end with a comma: {line}", i + 2));
        events.push(read_event_line(object, i % 500 == 0));
    }
    assert!(
        rest.is_empty() || rest.starts_with("{\"name\":"),
        "after the last newline: {rest:?}"
    );
    if serde_json::from_str::<Value>(rest).is_ok() {
        events.push(read_event_line(rest, true));
    }

    assert_eq!(events[0].name, "process_name");
    assert!(events.iter().all(|e| e.pid == u64::from(pid)));
    assert!(events.iter().all(|e| e.name != "perfflow_runtime"));
    let body: Vec<&LineEvent> = events.iter().filter(|e| e.ph != "M").collect();
    assert!(
        body.len() >= 3 * 65_536 && body.len() <= 300_001,
        "{} events reached the file",
        body.len()
    );
    let mut open: Vec<&str> = Vec::new();
    let mut last_ts = 0;
    for e in &body {
        assert_eq!(e.tid, u64::from(pid), "one recording thread");
        let ts = e.ts_ns.expect("ts");
        assert!(ts >= last_ts, "time went back: {e:?}");
        last_ts = ts;
        match e.ph.as_ref() {
            "B" => open.push(e.name.as_ref()),
            "E" => assert_eq!(open.pop(), Some(e.name.as_ref()), "stack order: {e:?}"),
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(
        open.len() <= 1,
        "at most the slice cut by the last write: {open:?}"
    );
}

/// Waits (at most 10 s) until the total size of the `.pfw` files in `dir`
/// stays the same for 200 ms.
fn wait_until_file_settles(dir: &std::path::Path) {
    let size = || -> u64 {
        fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".pfw"))
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut last = size();
    while std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let now = size();
        if now == last && now > 0 {
            return;
        }
        last = now;
    }
}

/// Runs `e2e_fork`: returns the run, the parent's trace and the child's.
fn forked_run(test: &str) -> (Scratch, Finished, Trace, Trace, u32) {
    let dir = Scratch::new(test);
    let done = run(&mut command(&program("e2e_fork"), &dir.path));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(done.printed("child_status").as_deref(), Some("0"));
    let child: u32 = done
        .printed("child")
        .and_then(|c| c.parse().ok())
        .expect("child pid printed");
    let host = done.host();
    let parent_name = format!("perfflow.array.{host}.{}.pfw", done.pid());
    let child_name = format!("perfflow.array.{host}.{child}.pfw");
    let mut want = vec![parent_name.clone(), child_name.clone()];
    want.sort();
    assert_eq!(pfw_names(&dir.path), want, "one trace per process");
    let parent = Trace::read(&dir.join(&parent_name));
    let child_trace = Trace::read(&dir.join(&child_name));
    (dir, done, parent, child_trace, child)
}

#[test]
fn parent_and_forked_child_each_write_a_complete_trace_of_their_own() {
    let (_dir, done, parent, child_trace, child) = forked_run("fork-files");
    parent.assert_complete(done.pid());
    child_trace.assert_complete(child);
    assert_eq!(child_trace.tids(), [u64::from(child)]);
    assert_eq!(
        parent.phases_on(u64::from(done.pid())),
        pairs(&[
            ("before_fork", "B"),
            ("before_fork", "E"),
            ("before_fork", "B"),
            ("before_fork", "E"),
            ("before_fork", "B"),
            ("before_fork", "E"),
            ("around_fork", "B"),
            ("after_fork", "B"),
            ("after_fork", "E"),
            ("around_fork", "E"),
        ])
    );
    assert!(
        parent.named("child_work").is_empty(),
        "the child's work is not in the parent's trace"
    );
}

#[test]
fn a_forked_childs_trace_holds_only_its_own_events_and_the_slice_it_forked_inside() {
    let (_dir, _done, parent, child_trace, child) = forked_run("fork-child");
    let mut want = vec![("around_fork", "B")];
    for _ in 0..10 {
        want.push(("child_work", "B"));
        want.push(("child_work", "E"));
    }
    want.push(("around_fork", "E"));
    assert_eq!(child_trace.phases_on(u64::from(child)), pairs(&want));
    assert!(child_trace.named("before_fork").is_empty());
    // The inherited slice begins at the fork, not when the parent entered
    // it (the program forks 5 ms after entering).
    let parent_begin = parent.named("around_fork")[0].ts();
    let child_begin = child_trace.named("around_fork")[0].ts();
    assert!(
        child_begin >= parent_begin + 4_000_000,
        "the child's around_fork begins at {child_begin} ns, not at the fork (the parent entered it at {parent_begin} ns)"
    );
    let first_work = child_trace.named("child_work")[0].ts();
    assert!(child_begin <= first_work);
}

/// One thread records 2 000 000 events. The program reads its peak resident
/// set size (VmHWM) at the end; it stays under 40 MiB because the runtime
/// writes full chunks out and reuses them. The trace is checked line by
/// line (a tree of two million parsed events would need gigabytes): the
/// array brackets on their own lines, every line one event (read with
/// [`support::read_event_line`], every 1000th and every metadata line
/// through `serde_json`), spans in stack order, and the summary's count.
#[test]
fn two_million_events_in_one_thread_keep_peak_memory_under_40_mib() {
    let dir = Scratch::new("memory");
    let done = run(&mut command(&program("e2e_memory"), &dir.path));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let hwm_kib: u64 = done
        .printed("vmhwm_kib")
        .and_then(|v| v.parse().ok())
        .expect("VmHWM printed");
    println!("VmHWM after 2M events: {hwm_kib} KiB");
    assert!(hwm_kib < 40 * 1024, "peak resident set {hwm_kib} KiB");

    let pid = done.pid();
    let name = format!("perfflow.array.{}.{pid}.pfw", done.host());
    assert_eq!(pfw_names(&dir.path), [name.as_str()]);
    let text = fs::read_to_string(dir.join(&name)).expect("read the trace");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"["));
    assert_eq!(lines.last(), Some(&"]"));
    let body = &lines[1..lines.len() - 1];
    let mut depth = 0usize;
    let mut last_ts = 0u64;
    let mut calls = 0usize;
    let mut events = 0u64;
    let mut summary = Value::Null;
    for (i, line) in body.iter().enumerate() {
        let last = i + 1 == body.len();
        let object = if last {
            line
        } else {
            line.strip_suffix(',')
                .unwrap_or_else(|| panic!("line {} does not end with a comma", i + 2))
        };
        let e = read_event_line(object, i % 1000 == 0 || last);
        assert_eq!(e.pid, u64::from(pid), "line {}", i + 2);
        if e.ph == "M" {
            if e.name == "perfflow_runtime" {
                assert!(last, "the summary is the last event");
                let value: Value = serde_json::from_str(object).expect("summary");
                summary = value["args"].clone();
            }
            continue;
        }
        events += 1;
        assert_eq!(
            (e.name.as_ref(), e.tid),
            ("m", u64::from(pid)),
            "line {}",
            i + 2
        );
        let ts = e.ts_ns.expect("ts");
        assert!(ts >= last_ts, "time went back at line {}", i + 2);
        last_ts = ts;
        match e.ph.as_ref() {
            "B" => {
                assert_eq!(depth, 0, "a B inside a B at line {}", i + 2);
                depth = 1;
                calls += 1;
            }
            "E" => {
                assert_eq!(depth, 1, "an E without its B at line {}", i + 2);
                depth = 0;
            }
            other => panic!("unexpected phase {other} at line {}", i + 2),
        }
    }
    assert_eq!(depth, 0);
    assert_eq!(calls, 1_000_000);
    assert_eq!(summary["events_written"], events, "summary: {summary}");
    assert_eq!(events, 2_000_000);
    assert_eq!(summary["events_dropped"], 0, "summary: {summary}");
}

#[test]
fn a_forked_child_never_truncates_a_parent_trace_whose_name_has_no_pid() {
    let dir = Scratch::new("fork-no-pid");
    let done = run(command(&program("e2e_fork"), &dir.path)
        .env("PERFFLOW_OPTIONS", "name=wf:log-filename-include=name"));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let child: u32 = done
        .printed("child")
        .and_then(|c| c.parse().ok())
        .expect("child pid printed");
    let parent_name = "perfflow.array.wf.pfw".to_string();
    let child_name = format!("perfflow.array.wf.{child}.pfw");
    let mut want = vec![parent_name.clone(), child_name.clone()];
    want.sort();
    assert_eq!(
        pfw_names(&dir.path),
        want,
        "the child moves to a name with its pid"
    );
    Trace::read(&dir.join(&parent_name)).assert_complete(done.pid());
    Trace::read(&dir.join(&child_name)).assert_complete(child);
    assert!(done.stderr.contains(&child_name), "stderr: {}", done.stderr);
}

/// `fork()` while two threads keep the writer thread's queue full: the
/// fork handlers must get the output lock between two chunks, not when the
/// queue is empty (the threads stop only after the forks, so waiting for
/// an empty queue would hang). The parent's trace is complete.
#[test]
fn fork_while_threads_keep_the_writer_busy_does_not_wait_for_them() {
    let dir = Scratch::new("fork-busy");
    let done = run(&mut command(&program("e2e_fork_busy"), &dir.path));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(done.printed("forks").as_deref(), Some("5"));
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    assert_eq!(
        pfw_names(&dir.path),
        [name.as_str()],
        "children leave no file"
    );
    let text = fs::read_to_string(dir.join(&name)).expect("read the trace");
    assert!(text.ends_with("]\n"), "the array is closed");
    let last = text
        .trim_end()
        .trim_end_matches(']')
        .trim_end()
        .rsplit('\n')
        .next()
        .unwrap();
    let summary: Value = serde_json::from_str(last).expect("last line is JSON");
    assert_eq!(summary["name"], "perfflow_runtime", "{last}");
    let calls: u64 = done.printed("calls").unwrap().parse().unwrap();
    assert_eq!(summary["args"]["events_written"], 2 * calls, "{last}");
    assert_eq!(summary["args"]["events_dropped"], 0, "{last}");
}
