//! The node and process metric sampler hosted in the traced process
//! (`PERFFLOW_OPTIONS=sampler=True`).
//!
//! One background thread, `perfflow-sampler`, started with tracing (the
//! first event), samples the sources of [`perfflow_monitor`] every
//! `sampler-interval` and writes every metric as a counter (`"C"`) event
//! into the same trace, one track per metric with its unit in the name, so
//! the metrics sit on the Perfetto timeline next to the woven spans. It
//! never writes span events. At the start it also writes the hardware
//! metadata and the list of sources that are unavailable on this node (each
//! once, in the trace, not on stderr). It stops when the trace is completed
//! (its next write finds the trace closed), and a forked child that traces
//! starts its own.
//!
//! Its cost is one sample per interval: see docs/benchmarks.md for the
//! figures per source.

use std::time::Duration;

use perfflow_monitor::{hardware_metadata, Sampler, SamplerConfig, Source};

/// Starts the sampler thread for this process; says once on stderr if the
/// thread cannot be started (the program runs on, without metrics).
pub(crate) fn start(interval: Duration, sources: Vec<Source>) {
    let spawned = crate::signals::spawn_service("perfflow-sampler", move || run(interval, sources));
    if let Err(e) = spawned {
        crate::shield::stderr_line(format_args!(
            "perfflow: cannot start the metric sampler ({e}); the trace has no metrics"
        ));
    }
}

/// The sampler's loop. Everything but the sleep runs with the runtime's
/// service lock held ([`crate::buffer::service_quiet`]), so a fork never
/// happens while the sampler allocates.
fn run(interval: Duration, sources: Vec<Source>) {
    let quiet = crate::buffer::service_quiet();
    let pid = std::process::id();
    let config = SamplerConfig {
        root_pid: pid as i32,
        sources: sources.clone(),
        ..SamplerConfig::default()
    };
    let mut sampler = Sampler::new(config);
    let unavailable: Vec<serde_json::Value> = sampler
        .unavailable()
        .iter()
        .map(|u| serde_json::json!({ "source": u.source.to_string(), "reason": u.reason }))
        .collect();
    let about = serde_json::json!({
        "interval_ms": interval.as_secs_f64() * 1e3,
        "sources": sources.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "unavailable": unavailable,
    });
    let about = about.to_string();
    let hardware = hardware_metadata().to_json_value().to_string();
    let open = crate::buffer::with_sink(|sink, _| {
        sink.metadata_args(b"perfflow_sampler", pid, &about);
        sink.metadata_args(b"perfflow_hardware", pid, &hardware);
    });
    if !open {
        return;
    }
    drop(quiet);
    loop {
        std::thread::sleep(interval);
        let _quiet = crate::buffer::service_quiet();
        let snapshot = sampler.sample();
        // On the spans' time base (monotonic clock paired with the wall
        // clock once), not the snapshot's wall-clock stamp, which a clock
        // step would shift against the spans.
        let sampled = crate::clock::stamp();
        let tracks = snapshot.tracks();
        let open = crate::buffer::with_sink(|sink, time| {
            let ts_ns = time.to_epoch_ns(sampled);
            for track in &tracks {
                sink.counter(track.name.as_bytes(), pid, ts_ns, &[("value", track.value)]);
            }
        });
        if !open {
            return;
        }
    }
}
