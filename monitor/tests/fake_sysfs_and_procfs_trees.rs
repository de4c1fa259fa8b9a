//! Readers pointed at fake `/sys` and `/proc` trees in a temporary
//! directory: InfiniBand counters, RAPL (with wraparound), CPU frequency
//! and hardware metadata, and what happens when those files are absent.

use perfflow_monitor::metadata::hardware_metadata_from;
use perfflow_monitor::{Sampler, SamplerConfig, Source};
use std::fs;
use std::path::Path;
use std::time::Duration;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

fn sampler(sources: Vec<Source>, proc_root: &Path, sys_root: &Path) -> Sampler {
    Sampler::new(SamplerConfig {
        sources,
        proc_root: proc_root.to_path_buf(),
        sys_root: sys_root.to_path_buf(),
        ..SamplerConfig::default()
    })
}

fn ib_port(sys: &Path, dev: &str, port: u32, xmit_words: u64, rcv_words: u64, packets: u64) {
    let base = format!("class/infiniband/{dev}/ports/{port}/counters");
    write(
        sys,
        &format!("{base}/port_xmit_data"),
        &format!("{xmit_words}\n"),
    );
    write(
        sys,
        &format!("{base}/port_rcv_data"),
        &format!("{rcv_words}\n"),
    );
    write(
        sys,
        &format!("{base}/port_xmit_packets"),
        &format!("{packets}\n"),
    );
    write(
        sys,
        &format!("{base}/port_rcv_packets"),
        &format!("{packets}\n"),
    );
    write(sys, &format!("{base}/symbol_error"), "0\n");
}

#[test]
fn infiniband_data_counters_are_read_per_port_and_given_in_bytes() {
    let dir = tempfile::tempdir().expect("tmp");
    let sys = dir.path();
    ib_port(sys, "mlx5_0", 1, 1_000, 2_000, 10);
    ib_port(sys, "mlx5_1", 1, 0, 0, 0);
    let mut s = sampler(vec![Source::Ib], sys, sys);
    assert!(s.unavailable().is_empty(), "{:?}", s.unavailable());
    let first = s.sample().ib.expect("ib sample");
    assert_eq!(first.ports.len(), 2);
    let p = &first.ports[0];
    assert_eq!((p.device.as_str(), p.port), ("mlx5_0", 1));
    assert_eq!(p.counters.xmit_bytes(), Some(4_000));
    assert_eq!(p.counters.rcv_bytes(), Some(8_000));
    assert_eq!(p.rx_bytes_per_s, None);

    ib_port(sys, "mlx5_0", 1, 1_000 + 250_000, 2_000, 20);
    std::thread::sleep(Duration::from_millis(100));
    let snap = s.sample();
    let p = &snap.ib.as_ref().expect("ib sample").ports[0];
    let tx = p.tx_bytes_per_s.expect("rate on the second sample");
    // 1 MB in about 0.1 s.
    assert!(tx > 1.0e6 && tx < 1.1e7, "tx {tx}");
    assert_eq!(p.rx_bytes_per_s, Some(0.0));
    assert!(snap
        .tracks()
        .iter()
        .any(|t| t.name == "ib mlx5_0:1 tx (bytes/s)"));
}

#[test]
fn absent_infiniband_is_reported_unavailable_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = sampler(vec![Source::Ib], dir.path(), dir.path());
    for _ in 0..3 {
        assert!(s.sample().ib.is_none());
    }
    assert_eq!(s.unavailable().len(), 1);
    assert_eq!(s.unavailable()[0].source, Source::Ib);
    assert!(s.unavailable()[0].reason.contains("no InfiniBand"));
}

fn rapl_domain(sys: &Path, dir: &str, name: &str, energy: u64, max: u64) {
    write(
        sys,
        &format!("class/powercap/{dir}/name"),
        &format!("{name}\n"),
    );
    write(
        sys,
        &format!("class/powercap/{dir}/energy_uj"),
        &format!("{energy}\n"),
    );
    write(
        sys,
        &format!("class/powercap/{dir}/max_energy_range_uj"),
        &format!("{max}\n"),
    );
}

const MAX: u64 = 262_143_328_850;

#[test]
fn rapl_power_comes_from_energy_deltas_per_domain() {
    let dir = tempfile::tempdir().expect("tmp");
    let sys = dir.path();
    write(sys, "class/powercap/intel-rapl/enabled", "1\n");
    rapl_domain(sys, "intel-rapl:0", "package-0", 1_000_000, MAX);
    rapl_domain(sys, "intel-rapl:0:0", "core", 500_000, MAX);
    let mut s = sampler(vec![Source::Rapl], sys, sys);
    assert!(s.unavailable().is_empty(), "{:?}", s.unavailable());
    let first = s.sample().rapl.expect("rapl");
    let names: Vec<_> = first.domains.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["package-0", "package-0/core"]);
    assert_eq!(first.domains[0].power_w, None);

    rapl_domain(
        sys,
        "intel-rapl:0",
        "package-0",
        1_000_000 + 10_000_000,
        MAX,
    );
    std::thread::sleep(Duration::from_millis(100));
    let snap = s.sample();
    let d = &snap.rapl.as_ref().expect("rapl").domains[0];
    assert_eq!(d.energy_total_j, 10.0);
    let w = d.power_w.expect("power");
    // 10 J in about 0.1 s.
    assert!(w > 10.0 && w < 100.0, "power {w}");
    assert!(snap.tracks().iter().any(|t| t.name == "rapl package-0 (W)"));
}

#[test]
fn rapl_energy_is_counted_across_a_wraparound() {
    let dir = tempfile::tempdir().expect("tmp");
    let sys = dir.path();
    rapl_domain(sys, "intel-rapl:0", "package-0", MAX - 2_000_000, MAX);
    let mut s = sampler(vec![Source::Rapl], sys, sys);
    s.sample();
    // The counter passes MAX and restarts from zero: 2 J + 3 J.
    rapl_domain(sys, "intel-rapl:0", "package-0", 3_000_000, MAX);
    std::thread::sleep(Duration::from_millis(20));
    let d = s.sample().rapl.expect("rapl").domains.remove(0);
    assert_eq!(d.energy_uj, 3_000_000);
    assert_eq!(d.energy_total_j, 5.0);
    assert!(d.power_w.is_some_and(|w| w > 0.0));
}

#[test]
fn absent_rapl_is_reported_unavailable_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = sampler(vec![Source::Rapl], dir.path(), dir.path());
    for _ in 0..3 {
        assert!(s.sample().rapl.is_none());
    }
    assert_eq!(s.unavailable().len(), 1);
    assert!(s.unavailable()[0].reason.contains("no RAPL domains"));
}

fn fake_proc(proc_root: &Path, cpuinfo: &str) {
    write(
        proc_root,
        "stat",
        "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\ncpu1 50 0 50 400 0 0 0 0 0 0\nctxt 1000\n",
    );
    write(proc_root, "loadavg", "0.50 0.40 0.30 1/100 4242\n");
    write(
        proc_root,
        "meminfo",
        "MemTotal: 2048 kB\nMemFree: 1024 kB\nMemAvailable: 1536 kB\nCached: 256 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
    );
    write(proc_root, "cpuinfo", cpuinfo);
}

const CPUINFO: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nstepping\t: 4\ncpu MHz\t\t: 2400.000\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nstepping\t: 4\ncpu MHz\t\t: 1200.500\nphysical id\t: 1\ncore id\t\t: 0\n\n";

#[test]
fn cpu_frequency_comes_from_cpufreq_when_present() {
    let dir = tempfile::tempdir().expect("tmp");
    let (proc_root, sys) = (dir.path().join("proc"), dir.path().join("sys"));
    fake_proc(&proc_root, CPUINFO);
    write(
        &sys,
        "devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
        "3100000\n",
    );
    write(
        &sys,
        "devices/system/cpu/cpu1/cpufreq/scaling_cur_freq",
        "800000\n",
    );
    let mut s = sampler(vec![Source::System], &proc_root, &sys);
    let sys_sample = s.sample().system.expect("system");
    let f: Vec<_> = sys_sample.cores.iter().map(|c| c.freq_mhz).collect();
    assert_eq!(f, [Some(3100.0), Some(800.0)]);
    assert_eq!(sys_sample.load.map(|l| l.one), Some(0.5));
    assert_eq!(sys_sample.memory.map(|m| m.used()), Some(512 * 1024));
}

#[test]
fn cpu_frequency_falls_back_to_cpuinfo_without_cpufreq() {
    let dir = tempfile::tempdir().expect("tmp");
    let (proc_root, sys) = (dir.path().join("proc"), dir.path().join("sys"));
    fake_proc(&proc_root, CPUINFO);
    let mut s = sampler(vec![Source::System], &proc_root, &sys);
    assert!(s.unavailable().is_empty(), "{:?}", s.unavailable());
    let f: Vec<_> = s
        .sample()
        .system
        .expect("system")
        .cores
        .iter()
        .map(|c| c.freq_mhz)
        .collect();
    assert_eq!(f, [Some(2400.0), Some(1200.5)]);
}

#[test]
fn system_cpu_percent_comes_from_proc_stat_deltas() {
    let dir = tempfile::tempdir().expect("tmp");
    let (proc_root, sys) = (dir.path().join("proc"), dir.path().join("sys"));
    fake_proc(&proc_root, CPUINFO);
    let mut s = sampler(vec![Source::System], &proc_root, &sys);
    // The first sample has no previous one: busy share since boot.
    assert_eq!(s.sample().system.expect("system").cpu_percent, Some(20.0));
    // cpu0 fully busy, cpu1 idle over 100 ticks each.
    write(
        &proc_root,
        "stat",
        "cpu  200 0 100 900 0 0 0 0 0 0\ncpu0 150 0 50 400 0 0 0 0 0 0\ncpu1 50 0 50 500 0 0 0 0 0 0\nctxt 1500\n",
    );
    std::thread::sleep(Duration::from_millis(10));
    let sys_sample = s.sample().system.expect("system");
    assert_eq!(sys_sample.cpu_percent, Some(50.0));
    let per_core: Vec<_> = sys_sample.cores.iter().map(|c| c.percent).collect();
    assert_eq!(per_core, [Some(100.0), Some(0.0)]);
    assert!(sys_sample.context_switches_per_s.is_some_and(|r| r > 0.0));
}

#[test]
fn a_malformed_proc_stat_is_reported_with_its_path_and_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let (proc_root, sys) = (dir.path().join("proc"), dir.path().join("sys"));
    fake_proc(&proc_root, CPUINFO);
    write(&proc_root, "stat", "cpu  1 2 3 4\ncpu0 x 2 3 4\n");
    let s = sampler(vec![Source::System], &proc_root, &sys);
    let u = &s.unavailable()[0];
    assert_eq!(u.source, Source::System);
    let expected = format!("{}:2:", proc_root.join("stat").display());
    assert!(u.reason.starts_with(&expected), "{}", u.reason);
}

#[test]
fn metadata_reads_topology_caches_and_numa_nodes() {
    let dir = tempfile::tempdir().expect("tmp");
    let (proc_root, sys) = (dir.path().join("proc"), dir.path().join("sys"));
    fake_proc(&proc_root, CPUINFO);
    write(&sys, "devices/system/cpu/online", "0-1\n");
    for (cpu, pkg) in [(0, 0), (1, 1)] {
        let base = format!("devices/system/cpu/cpu{cpu}");
        write(
            &sys,
            &format!("{base}/topology/physical_package_id"),
            &format!("{pkg}\n"),
        );
        write(&sys, &format!("{base}/topology/core_id"), "0\n");
        for (idx, level, kind, size, shared) in [
            (0, 1, "Data", "32K", cpu.to_string()),
            (1, 1, "Instruction", "32K", cpu.to_string()),
            (2, 2, "Unified", "1024K", cpu.to_string()),
            (3, 3, "Unified", "28160K", cpu.to_string()),
        ] {
            let c = format!("{base}/cache/index{idx}");
            write(&sys, &format!("{c}/level"), &format!("{level}\n"));
            write(&sys, &format!("{c}/type"), &format!("{kind}\n"));
            write(&sys, &format!("{c}/size"), &format!("{size}\n"));
            write(
                &sys,
                &format!("{c}/shared_cpu_list"),
                &format!("{shared}\n"),
            );
        }
        write(
            &sys,
            &format!("devices/system/node/node{pkg}/cpulist"),
            &format!("{cpu}\n"),
        );
        write(
            &sys,
            &format!("devices/system/node/node{pkg}/meminfo"),
            &format!("Node {pkg} MemTotal:       1024 kB\nNode {pkg} MemFree: 1 kB\n"),
        );
    }
    let md = hardware_metadata_from(&proc_root, &sys, false);
    assert_eq!(md.cpu.vendor.as_deref(), Some("GenuineIntel"));
    assert_eq!((md.cpu.family, md.cpu.model), (Some(6), Some(85)));
    assert_eq!((md.cpu.sockets, md.cpu.cores, md.cpu.threads), (2, 2, 2));
    let l3 = md.cpu.caches.iter().find(|c| c.level == 3).expect("L3");
    assert_eq!((l3.size_bytes, l3.instances), (Some(28160 * 1024), 2));
    assert_eq!(md.memory_total_bytes, Some(2048 * 1024));
    assert_eq!(md.numa_nodes.len(), 2);
    assert_eq!(md.numa_nodes[1].cpus, vec![1]);
    assert_eq!(md.numa_nodes[1].memory_total_bytes, Some(1024 * 1024));
    let v = md.to_json_value();
    assert_eq!(v["cpu"]["sockets"], 2);
    assert_eq!(v["numa_nodes"][0]["cpus"][0], 0);
    assert!(v["kernel"]["release"].is_string());
}
