//! The rows of the metric files put perfmon's values under perfmon's keys
//! (raw counters, micro-joules, counts per interval, milliwatts, KB/s) and
//! our rates under keys of their own. Built from a literal snapshot.

use perfflow_monitor::cli::record::{rows, MetricFile, Row};
use perfflow_monitor::parse::net_dev::NetDevice;
use perfflow_monitor::source::gpu::{GpuDeviceSample, GpuSample};
use perfflow_monitor::source::net::{NetInterfaceSample, NetSample};
use perfflow_monitor::source::perf::{PerfDerived, PerfEventSample, PerfSample, PerfScope};
use perfflow_monitor::source::rapl::{RaplDomainSample, RaplSample};
use perfflow_monitor::Snapshot;

fn iface(name: &str, rx: u64, tx: u64) -> NetInterfaceSample {
    NetInterfaceSample {
        counters: NetDevice {
            name: name.into(),
            rx_bytes: rx,
            rx_packets: 10,
            rx_errs: 0,
            rx_drop: 0,
            tx_bytes: tx,
            tx_packets: 20,
            tx_errs: 0,
            tx_drop: 0,
        },
        rx_bytes_per_s: Some(1.0),
        tx_bytes_per_s: Some(2.0),
        rx_packets_per_s: None,
        tx_packets_per_s: None,
    }
}

fn domain(name: &str, uj: u64) -> RaplDomainSample {
    RaplDomainSample {
        name: name.into(),
        energy_uj: uj,
        energy_total_j: 3.5,
        power_w: Some(42.0),
    }
}

fn snapshot() -> Snapshot {
    Snapshot {
        timestamp_ns: 1_763_700_000_000_000_000,
        interval_s: Some(30.0),
        process: None,
        system: None,
        net: Some(NetSample {
            interfaces: vec![iface("lo", 100, 100), iface("eth0", 5000, 7000)],
        }),
        ib: None,
        rapl: Some(RaplSample {
            domains: vec![
                domain("package-0", 123_456_789),
                domain("package-0/core", 1_000),
                domain("package-0/dram", 2_000),
            ],
        }),
        perf: Some(PerfSample {
            scope: PerfScope::UserOnly,
            tasks: 1,
            events: vec![
                PerfEventSample {
                    name: "instructions".into(),
                    count: 9_000,
                    interval_count: Some(3_000),
                    per_s: Some(100.0),
                    multiplexed: false,
                },
                PerfEventSample {
                    name: "task-clock".into(),
                    count: 90_000_000,
                    interval_count: Some(30_000_000),
                    per_s: Some(1e6),
                    multiplexed: false,
                },
            ],
            derived: PerfDerived::default(),
            groups: Vec::new(),
        }),
        gpu: Some(GpuSample {
            devices: vec![GpuDeviceSample {
                index: 0,
                memory_used_bytes: Some(1 << 30),
                bar1_used_bytes: Some(1 << 20),
                power_mw: Some(312_500),
                power_w: Some(312.5),
                pcie_tx_kb_s: Some(2048),
                pcie_rx_kb_s: Some(1024),
                violation_ns: Some(5_000),
                ecc_corrected: Some(2),
                ecc_uncorrected: Some(1),
                ..GpuDeviceSample::default()
            }],
        }),
    }
}

fn value(row: &Row, key: &str) -> (String, Option<f64>) {
    let (_, unit, v) = row
        .values
        .iter()
        .find(|(k, _, _)| k == key)
        .unwrap_or_else(|| panic!("no key {key}"));
    (unit.to_string(), *v)
}

#[test]
fn perfmon_keys_hold_raw_counters_in_perfmons_units() {
    let rows = rows(&snapshot(), "n1");
    let of = |f: MetricFile| rows.iter().find(|r| r.file == f).expect("row");
    let (cpu, perf, gpu) = (
        of(MetricFile::Cpu),
        of(MetricFile::Perf),
        of(MetricFile::Gpu),
    );
    assert_eq!(gpu.host, "gpu-0.n1");
    let expected: [(&Row, &str, &str, f64); 18] = [
        // Raw, summed over every interface (loopback too, as psutil).
        (cpu, "net_io_counters.bytes_recv", "bytes", 5100.0),
        (cpu, "net_io_counters.bytes_sent", "bytes", 7100.0),
        (cpu, "net_io_counters.packets_sent", "count", 40.0),
        (cpu, "net_io_rates.bytes_recv", "bytes/s", 2.0),
        // RAPL: raw micro-joules under perfmon's domain names.
        (cpu, "rapl_powercap.package-0", "uJ", 123_456_789.0),
        (cpu, "rapl_powercap.core-0", "uJ", 1_000.0),
        (cpu, "rapl_powercap.dram-0", "uJ", 2_000.0),
        (cpu, "rapl_power.package-0", "W", 42.0),
        // perf: counts over the interval, task-clock in ms.
        (perf, "hardware_events.instructions", "count", 3_000.0),
        (perf, "software_events.task-clock", "ms", 30.0),
        // GPU: NVML's units.
        (
            gpu,
            "memory_used.gpu_memory",
            "bytes",
            f64::from(1u32 << 30),
        ),
        (
            gpu,
            "memory_used.bar1_memory",
            "bytes",
            f64::from(1u32 << 20),
        ),
        (gpu, "power_usage", "mW", 312_500.0),
        (gpu, "pci_thgpt.send", "KB/s", 2048.0),
        (gpu, "pci_thgpt.recv", "KB/s", 1024.0),
        (gpu, "violation", "ns", 5_000.0),
        (gpu, "ecc_errors.sp", "count", 2.0),
        (gpu, "ecc_errors.dp", "count", 1.0),
    ];
    for (row, key, unit, v) in expected {
        assert_eq!(value(row, key), (unit.to_string(), Some(v)), "{key}");
    }
}
