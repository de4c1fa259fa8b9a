//! The sampler as the runtime and the job monitor use it: every source
//! requested, snapshots flattened to tracks, unavailable sources reported
//! once.

use perfflow_monitor::{Sampler, SamplerConfig, Source};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[test]
fn a_missing_gpu_is_reported_unavailable_once_and_never_fails_a_sample() {
    let mut s = Sampler::new(SamplerConfig {
        sources: vec![Source::Gpu],
        ..SamplerConfig::default()
    });
    let snaps: Vec<_> = (0..3).map(|_| s.sample()).collect();
    if s.available().contains(&Source::Gpu) {
        println!("this machine has an NVIDIA GPU; checking its samples instead");
        assert!(snaps
            .iter()
            .all(|sn| sn.gpu.as_ref().is_some_and(|g| !g.devices.is_empty())));
        return;
    }
    assert!(snaps.iter().all(|sn| sn.gpu.is_none()));
    let gpu: Vec<_> = s
        .unavailable()
        .iter()
        .filter(|u| u.source == Source::Gpu)
        .collect();
    assert_eq!(gpu.len(), 1, "{:?}", s.unavailable());
    println!("{}", gpu[0]);
}

#[test]
fn the_first_snapshot_has_cpu_percentages_since_start_and_the_second_has_rates() {
    let mut s = Sampler::new(SamplerConfig {
        sources: vec![Source::Proc, Source::System, Source::Net],
        ..SamplerConfig::default()
    });
    let first = s.sample();
    assert_eq!(first.interval_s, None);
    // Since boot for the system, since the process started for the tree.
    let percent = |v: Option<f64>| v.is_some_and(|p| (0.0..=100.0 * 4096.0).contains(&p));
    assert!(percent(first.system.as_ref().and_then(|x| x.cpu_percent)));
    assert!(percent(
        first.process.as_ref().and_then(|p| p.rates.cpu_percent)
    ));
    let net = first.net.as_ref().expect("net");
    assert!(net.interfaces.iter().all(|i| i.rx_bytes_per_s.is_none()));
    std::thread::sleep(Duration::from_millis(50));
    let second = s.sample();
    assert!(second.interval_s.is_some_and(|i| i >= 0.05));
    assert!(second
        .process
        .as_ref()
        .and_then(|p| p.rates.cpu_percent)
        .is_some());
    let net = second.net.as_ref().expect("net");
    assert!(net.interfaces.iter().all(|i| i.rx_bytes_per_s.is_some()));
}

#[test]
fn every_track_name_carries_its_unit() {
    let mut s = Sampler::new(SamplerConfig::default());
    s.sample();
    std::thread::sleep(Duration::from_millis(20));
    let tracks = s.sample().tracks();
    assert!(tracks.iter().any(|t| t.name == "cpu total (%)"));
    assert!(tracks.iter().any(|t| t.name == "mem used (bytes)"));
    assert!(tracks.iter().any(|t| t.name == "proc rss (bytes)"));
    for t in &tracks {
        assert!(
            t.name.ends_with(')') && t.name.contains(" ("),
            "track `{}` has no unit",
            t.name
        );
        assert!(t.value.is_finite());
    }
}

#[test]
fn snapshots_are_stamped_in_nanoseconds_since_the_unix_epoch() {
    let before = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_nanos() as u64;
    let mut s = Sampler::new(SamplerConfig {
        sources: vec![Source::System],
        ..SamplerConfig::default()
    });
    let t = s.sample().timestamp_ns;
    let after = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_nanos() as u64;
    assert!(before <= t && t <= after);
}

#[test]
fn unrequested_sources_are_neither_sampled_nor_reported() {
    let mut s = Sampler::new(SamplerConfig {
        sources: vec![Source::Net],
        ..SamplerConfig::default()
    });
    let snap = s.sample();
    assert!(snap.net.is_some());
    assert!(snap.process.is_none() && snap.system.is_none() && snap.gpu.is_none());
    assert!(s.unavailable().is_empty(), "{:?}", s.unavailable());
    assert_eq!(s.available(), vec![Source::Net]);
}
