//! With `clock=tsc` events are stamped by `rdtsc` and converted on the
//! writer thread, yet their timestamps agree with `CLOCK_MONOTONIC` read by
//! the program around each call: every enter lies between the readings
//! before and after it, every exit too, within the pairing error the trace
//! itself reports for its calibration points (plus 10 µs for the monotonic
//! clock's own rate adjustments between two points). The trace's
//! `perfflow_clock` metadata names the clock that was used: the TSC exactly
//! where `/proc/cpuinfo` shows an invariant one. The same holds with
//! `clock=monotonic` and in both output formats' time base.

mod support;

use support::{command, pfw_files, program, run, Scratch, Trace};

/// Whether the CPU has an invariant TSC, read independently of the runtime.
fn invariant_tsc() -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default()
        .to_string();
    let has = |w: &str| flags.split_whitespace().any(|f| f == w);
    cfg!(target_arch = "x86_64") && has("constant_tsc") && has("nonstop_tsc")
}

fn agree(clock: &str, test: &str) {
    let dir = Scratch::new(test);
    let done = run(command(&program("clock_readings"), &dir.path)
        .arg("1000")
        .env("PERFFLOW_OPTIONS", format!("clock={clock}")));
    assert!(done.status.success(), "{}", done.stderr);
    let files = pfw_files(&dir.path);
    assert_eq!(files.len(), 1);
    let trace = Trace::read(&files[0]);
    let meta = |name: &str| {
        trace
            .events
            .iter()
            .find(|e| e.is_metadata() && e.name() == name)
            .unwrap_or_else(|| panic!("no {name} metadata"))
            .value["args"]
            .clone()
    };
    let pairing = &meta("perfflow_process")["clock"];
    let real0 = pairing["realtime_ns"].as_u64().unwrap();
    let mono0 = pairing["monotonic_ns"].as_u64().unwrap();
    let clock_meta = meta("perfflow_clock");
    let expect = if clock == "tsc" && invariant_tsc() {
        "tsc"
    } else {
        "monotonic"
    };
    assert_eq!(clock_meta["source"], expect, "{clock_meta}");
    let tolerance = clock_meta["pairing_width_max_ns"].as_u64().unwrap_or(0) as i64 / 2 + 10_000;
    if expect == "tsc" {
        assert!(
            clock_meta["ns_per_tick"].as_f64().unwrap() > 0.0,
            "{clock_meta}"
        );
        assert!(
            clock_meta["fit_residual_max_ns"].is_number(),
            "{clock_meta}"
        );
    }
    // Back from the trace's time base to CLOCK_MONOTONIC.
    let mono = |ts_ns: u64| ts_ns as i64 - real0 as i64 + mono0 as i64;
    let readings: Vec<[i64; 3]> = done
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("reading "))
        .map(|l| {
            let v: Vec<i64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    let begins: Vec<i64> = trace
        .named("tick")
        .iter()
        .filter(|e| e.ph() == "B")
        .map(|e| mono(e.ts()))
        .collect();
    let ends: Vec<i64> = trace
        .named("tick")
        .iter()
        .filter(|e| e.ph() == "E")
        .map(|e| mono(e.ts()))
        .collect();
    assert_eq!(readings.len(), 1000);
    assert_eq!(begins.len(), 1000);
    assert_eq!(ends.len(), 1000);
    let mut worst = 0i64;
    for (i, r) in readings.iter().enumerate() {
        for (stamp, lo, hi) in [(begins[i], r[0], r[1]), (ends[i], r[1], r[2])] {
            let off = if stamp < lo {
                lo - stamp
            } else if stamp > hi {
                stamp - hi
            } else {
                0
            };
            worst = worst.max(off);
        }
    }
    assert!(
        worst <= tolerance,
        "an event lies {worst} ns outside the monotonic readings around it (tolerance \
         {tolerance} ns; clock {clock_meta})"
    );
}

#[test]
fn tsc_stamps_agree_with_the_monotonic_clock() {
    agree("tsc", "tsc-agrees");
}

#[test]
fn monotonic_stamps_agree_with_the_monotonic_clock() {
    agree("monotonic", "monotonic-agrees");
}
