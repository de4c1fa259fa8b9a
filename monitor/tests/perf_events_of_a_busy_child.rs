//! The perf source on a child that spins and faults pages. Hardware
//! counters are often missing on virtual machines; the tests accept that
//! as long as it is reported, and skip with a printed reason where the
//! kernel refuses perf altogether.

mod common;

use perfflow_monitor::source::perf::PerfSample;
use perfflow_monitor::{GroupSelection, Sampler, SamplerConfig, Source};

const ENTRY: &str = "child_workloads_start_here_and_nowhere_else";
/// perf's task clock and the thread CPU clock are advanced at slightly
/// different points of a context switch; on a busy CPU they drift apart by
/// a few microseconds per switch. A counter that misses a task misses all
/// of its time, far more than this.
fn at_least_most_of(counted: u64, used: u64) -> bool {
    counted >= used - used / 50
}

const HARDWARE: [&str; 6] = [
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
];

#[test]
fn child_workloads_start_here_and_nowhere_else() {
    common::run_workload_if_requested();
}

fn perf_sampler(pid: i32) -> Sampler {
    Sampler::new(SamplerConfig {
        root_pid: pid,
        sources: vec![Source::Perf],
        perf_groups: GroupSelection::Matching,
        ..SamplerConfig::default()
    })
}

fn event<'a>(
    p: &'a PerfSample,
    name: &str,
) -> Option<&'a perfflow_monitor::source::perf::PerfEventSample> {
    p.events.iter().find(|e| e.name == name)
}

#[test]
fn hardware_events_are_either_counted_or_reported_unavailable() {
    let w = common::spawn(ENTRY, "busy");
    let mut s = perf_sampler(w.pid());
    let Some(p) = s.sample().perf else {
        println!("skipped: perf unavailable: {:?}", s.unavailable());
        return;
    };
    for name in HARDWARE {
        let counted = event(&p, name).is_some();
        let reported = s
            .unavailable()
            .iter()
            .any(|u| u.source == Source::Perf && u.reason.starts_with(&format!("{name}:")));
        assert!(
            counted != reported,
            "{name}: counted {counted}, reported {reported}"
        );
        if reported {
            println!("{name} unavailable here");
        }
    }
    w.finish();
}

/// The counters must cover every CPU nanosecond and page fault the child
/// spends while they count, and the rates must be the counts over the
/// sampler's own interval. The child uses a fixed amount of CPU time (not
/// wall time), so a loaded machine makes the test slower, never wrong.
#[test]
fn software_events_count_the_task_clock_and_page_faults_of_a_busy_child() {
    const CPU_MS: u64 = 200;
    const PAGES: u64 = 512;
    let mut w = common::spawn(ENTRY, "burn");
    let mut s = perf_sampler(w.pid());
    let first = s.sample();
    let Some(first_perf) = first.perf else {
        println!("skipped: perf unavailable: {:?}", s.unavailable());
        return;
    };
    assert!(
        first_perf
            .events
            .iter()
            .all(|e| e.interval_count == Some(e.count)),
        "the first interval starts when counting starts"
    );
    let burnt: u64 = w
        .ask(&format!("{CPU_MS} {PAGES}"), "burnt ")
        .parse()
        .expect("CPU time the child used");
    let second = s.sample();
    let p = second.perf.expect("perf stays available");
    let interval = second.interval_s.expect("an interval on the second sample");
    let delta = |name: &str| {
        let before = event(&first_perf, name).map_or(0, |e| e.count);
        let after = event(&p, name).unwrap_or_else(|| panic!("{name} is counted"));
        assert_eq!(
            after.interval_count,
            Some(after.count - before),
            "{name}: the count over the interval, as perf stat -I prints it"
        );
        (after.count - before, after.per_s)
    };

    let (clock, clock_per_s) = delta("task-clock");
    assert!(
        at_least_most_of(clock, burnt),
        "task-clock grew {clock} ns while the child used {burnt} ns of CPU"
    );
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    let expected_rate = clock as f64 / interval;
    assert!(
        clock_per_s.is_some_and(|r| close(r, expected_rate)),
        "task-clock rate {clock_per_s:?}, expected {expected_rate}"
    );
    assert!(
        p.derived
            .cpus_utilized
            .is_some_and(|c| close(c, expected_rate / 1e9)),
        "{:?}, expected {} CPUs",
        p.derived,
        expected_rate / 1e9
    );

    let (faults, _) = delta("page-faults");
    assert!(
        faults >= PAGES,
        "page faults grew {faults} while the child faulted {PAGES} pages"
    );
    w.finish();
}

/// Counters are attached to the tasks that exist at the probe with
/// `inherit` set; a thread started later (here, in this test process) is
/// counted through its creator's counter.
#[test]
fn a_thread_started_after_the_probe_is_counted_through_inheritance() {
    let mut s = perf_sampler(std::process::id() as i32);
    if s.sample().perf.is_none() {
        println!("skipped: perf unavailable: {:?}", s.unavailable());
        return;
    }
    let burnt = std::thread::spawn(|| common::burn_cpu(200_000_000))
        .join()
        .expect("the spinning thread");
    let p = s.sample().perf.expect("perf stays available");
    let clock = event(&p, "task-clock").expect("task-clock");
    assert!(
        at_least_most_of(clock.count, burnt),
        "task-clock {} ns, the thread alone used {burnt} ns",
        clock.count
    );
}
