//! Flattening a [`Snapshot`] into named values for counter tracks. Every
//! name carries its unit in parentheses (`(%)`, `(bytes)`, `(bytes/s)`,
//! `(W)`, `(1/s)`, `(count)`...); values a source lacks produce no track.

use crate::sampler::Snapshot;

/// One named value of a snapshot, for a counter track.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// Name with the unit, e.g. `cpu total (%)` or `net eth0 rx (bytes/s)`.
    pub name: String,
    /// The value in that unit.
    pub value: f64,
}

struct Out(Vec<Track>);

impl Out {
    fn f(&mut self, name: impl Into<String>, v: Option<f64>) {
        if let Some(value) = v.filter(|v| v.is_finite()) {
            self.0.push(Track {
                name: name.into(),
                value,
            });
        }
    }

    fn u(&mut self, name: impl Into<String>, v: Option<u64>) {
        self.f(name, v.map(|v| v as f64));
    }
}

impl Snapshot {
    /// Every value of the snapshot as a named track.
    pub fn tracks(&self) -> Vec<Track> {
        let mut o = Out(Vec::new());
        if let Some(p) = &self.process {
            let t = &p.totals;
            let r = &p.rates;
            o.f("proc cpu (%)", r.cpu_percent);
            o.f("proc cpu user (s)", Some(t.user_time_s));
            o.f("proc cpu system (s)", Some(t.system_time_s));
            o.u("proc processes (count)", Some(t.processes as u64));
            o.u("proc threads (count)", Some(t.threads));
            o.u("proc fds (count)", t.fds);
            o.u("proc rss (bytes)", Some(t.rss_bytes));
            o.u("proc vms (bytes)", Some(t.vms_bytes));
            o.u("proc shared (bytes)", t.shared_bytes);
            o.u("proc uss (bytes)", t.uss_bytes);
            o.u("proc swap (bytes)", t.swap_bytes);
            o.f("proc mem (%)", t.memory_percent);
            o.u("proc read (bytes)", t.io.read_bytes);
            o.u("proc write (bytes)", t.io.write_bytes);
            o.f("proc read (bytes/s)", r.io.read_bytes);
            o.f("proc write (bytes/s)", r.io.write_bytes);
            o.f("proc read chars (bytes/s)", r.io.read_chars);
            o.f("proc write chars (bytes/s)", r.io.write_chars);
            o.f("proc read calls (1/s)", r.io.read_calls);
            o.f("proc write calls (1/s)", r.io.write_calls);
            o.f(
                "proc ctx switches voluntary (1/s)",
                r.voluntary_ctxt_switches,
            );
            o.f(
                "proc ctx switches involuntary (1/s)",
                r.nonvoluntary_ctxt_switches,
            );
        }
        if let Some(s) = &self.system {
            o.f("cpu total (%)", s.cpu_percent);
            for c in &s.cores {
                o.f(format!("cpu {} (%)", c.cpu), c.percent);
            }
            for c in &s.cores {
                o.f(format!("cpu {} freq (MHz)", c.cpu), c.freq_mhz);
            }
            o.f("ctx switches (1/s)", s.context_switches_per_s);
            if let Some(l) = &s.load {
                o.f("load 1m (tasks)", Some(l.one));
                o.f("load 5m (tasks)", Some(l.five));
                o.f("load 15m (tasks)", Some(l.fifteen));
            }
            if let Some(m) = &s.memory {
                o.u("mem total (bytes)", Some(m.mem_total));
                o.u("mem available (bytes)", m.mem_available);
                o.u("mem used (bytes)", Some(m.used()));
                o.u("mem cached (bytes)", m.cached);
                o.u("swap total (bytes)", m.swap_total);
                o.u("swap used (bytes)", m.swap_used());
            }
        }
        if let Some(n) = &self.net {
            for i in &n.interfaces {
                let name = &i.counters.name;
                o.f(format!("net {name} rx (bytes/s)"), i.rx_bytes_per_s);
                o.f(format!("net {name} tx (bytes/s)"), i.tx_bytes_per_s);
                o.f(format!("net {name} rx packets (1/s)"), i.rx_packets_per_s);
                o.f(format!("net {name} tx packets (1/s)"), i.tx_packets_per_s);
                o.u(format!("net {name} rx (bytes)"), Some(i.counters.rx_bytes));
                o.u(format!("net {name} tx (bytes)"), Some(i.counters.tx_bytes));
            }
        }
        if let Some(ib) = &self.ib {
            for p in &ib.ports {
                let name = format!("{}:{}", p.device, p.port);
                o.f(format!("ib {name} rx (bytes/s)"), p.rx_bytes_per_s);
                o.f(format!("ib {name} tx (bytes/s)"), p.tx_bytes_per_s);
                o.f(format!("ib {name} rx packets (1/s)"), p.rx_packets_per_s);
                o.f(format!("ib {name} tx packets (1/s)"), p.tx_packets_per_s);
                o.u(format!("ib {name} rx (bytes)"), p.counters.rcv_bytes());
                o.u(format!("ib {name} tx (bytes)"), p.counters.xmit_bytes());
            }
        }
        if let Some(r) = &self.rapl {
            for d in &r.domains {
                o.f(format!("rapl {} (W)", d.name), d.power_w);
                o.f(
                    format!("rapl {} energy (J)", d.name),
                    Some(d.energy_total_j),
                );
            }
        }
        if let Some(p) = &self.perf {
            for e in &p.events {
                if e.name == "task-clock" {
                    o.f("perf task-clock (CPUs)", p.derived.cpus_utilized);
                } else {
                    o.f(format!("perf {} (1/s)", e.name), e.per_s);
                }
            }
            o.f("perf ipc (instructions/cycle)", p.derived.ipc);
            o.f("perf cache miss (%)", p.derived.cache_miss_percent);
            o.f("perf branch miss (%)", p.derived.branch_miss_percent);
            for g in &p.groups {
                for m in &g.metrics {
                    let unit = m.unit.as_deref().unwrap_or("ratio");
                    o.f(format!("perf {} {} ({unit})", g.group, m.name), m.value);
                }
            }
        }
        if let Some(g) = &self.gpu {
            for d in &g.devices {
                let n = format!("gpu{}", d.index);
                let u32f = |v: Option<u32>| v.map(f64::from);
                o.f(format!("{n} util (%)"), u32f(d.utilization_gpu_percent));
                o.f(
                    format!("{n} mem util (%)"),
                    u32f(d.utilization_memory_percent),
                );
                o.f(format!("{n} encoder util (%)"), u32f(d.encoder_percent));
                o.f(format!("{n} decoder util (%)"), u32f(d.decoder_percent));
                o.u(format!("{n} mem used (bytes)"), d.memory_used_bytes);
                o.u(format!("{n} mem total (bytes)"), d.memory_total_bytes);
                o.u(format!("{n} bar1 used (bytes)"), d.bar1_used_bytes);
                o.f(format!("{n} power (W)"), d.power_w);
                o.f(format!("{n} energy (J)"), d.energy_j);
                o.f(format!("{n} temperature (C)"), u32f(d.temperature_c));
                o.f(format!("{n} fan (%)"), u32f(d.fan_percent));
                o.f(
                    format!("{n} clock graphics (MHz)"),
                    u32f(d.clock_graphics_mhz),
                );
                o.f(format!("{n} clock sm (MHz)"), u32f(d.clock_sm_mhz));
                o.f(format!("{n} clock mem (MHz)"), u32f(d.clock_memory_mhz));
                o.f(format!("{n} pcie tx (bytes/s)"), d.pcie_tx_bytes_per_s);
                o.f(format!("{n} pcie rx (bytes/s)"), d.pcie_rx_bytes_per_s);
                o.u(
                    format!("{n} throttle reasons (bitmask)"),
                    d.throttle_reasons,
                );
                o.f(
                    format!("{n} power violation (%)"),
                    d.power_violation_percent,
                );
                o.f(
                    format!("{n} thermal violation (%)"),
                    d.thermal_violation_percent,
                );
                o.u(format!("{n} ecc corrected (count)"), d.ecc_corrected);
                o.u(format!("{n} ecc uncorrected (count)"), d.ecc_uncorrected);
                o.u(
                    format!("{n} processes (count)"),
                    d.processes.as_ref().map(|p| p.len() as u64),
                );
            }
        }
        o.0
    }
}
