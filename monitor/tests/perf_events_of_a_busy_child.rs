//! The perf source on a child that spins and faults pages. Hardware
//! counters are often missing on virtual machines; the tests accept that
//! as long as it is reported, and skip with a printed reason where the
//! kernel refuses perf altogether.

mod common;

use perfflow_monitor::source::perf::PerfSample;
use perfflow_monitor::{GroupSelection, Sampler, SamplerConfig, Source};
use std::time::Duration;

const ENTRY: &str = "child_workloads_start_here_and_nowhere_else";
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

#[test]
fn software_events_count_the_task_clock_and_page_faults_of_a_busy_child() {
    let w = common::spawn(ENTRY, "busy");
    let mut s = perf_sampler(w.pid());
    let first = s.sample();
    let Some(first) = first.perf else {
        println!("skipped: perf unavailable: {:?}", s.unavailable());
        return;
    };
    assert!(
        first.events.iter().all(|e| e.per_s.is_none()),
        "no rates on the first sample"
    );
    std::thread::sleep(Duration::from_millis(400));
    let p = s.sample().perf.expect("perf stays available");
    let clock = event(&p, "task-clock").expect("task-clock is counted whenever perf works");
    // The child spins on one thread: about 0.4 s of CPU in 0.4 s.
    assert!(clock.count > 100_000_000, "task-clock {} ns", clock.count);
    assert!(
        p.derived.cpus_utilized.is_some_and(|c| c > 0.3),
        "{:?}",
        p.derived
    );
    let faults = event(&p, "page-faults").expect("page-faults is a software event");
    // Transparent huge pages may fault 2 MiB at a time, so expect few.
    assert!(faults.count > 100, "page faults {}", faults.count);
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
    let t = std::thread::spawn(|| {
        let start = std::time::Instant::now();
        let mut x = 1u64;
        while start.elapsed() < Duration::from_millis(200) {
            x = x.wrapping_mul(3).wrapping_add(1);
        }
        std::hint::black_box(x);
    });
    let _ = t.join();
    let p = s.sample().perf.expect("perf stays available");
    let clock = event(&p, "task-clock").expect("task-clock");
    assert!(clock.count > 150_000_000, "task-clock {} ns", clock.count);
}
