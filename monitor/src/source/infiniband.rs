//! InfiniBand port counters from
//! `/sys/class/infiniband/<device>/ports/<port>/counters/` (system-wide).
//! Data counters are in 4-byte words and are given here in bytes; see
//! [`crate::parse::infiniband`].

use super::{rate, KeptFile, TextReader};
use crate::parse::infiniband::{self, IbPortCounters};
use std::path::Path;
use std::time::Instant;

/// One port at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct IbPortSample {
    /// HCA name, e.g. `mlx5_0`.
    pub device: String,
    /// Port number.
    pub port: u32,
    /// Raw cumulative counters (data in 4-byte words).
    pub counters: IbPortCounters,
    /// Bytes received per second.
    pub rx_bytes_per_s: Option<f64>,
    /// Bytes transmitted per second.
    pub tx_bytes_per_s: Option<f64>,
    /// Packets received per second.
    pub rx_packets_per_s: Option<f64>,
    /// Packets transmitted per second.
    pub tx_packets_per_s: Option<f64>,
}

/// Every port at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct IbSample {
    /// Ports, ordered by device and port.
    pub ports: Vec<IbPortSample>,
}

#[derive(Debug)]
struct Port {
    device: String,
    port: u32,
    files: Vec<(String, KeptFile)>,
    prev: Option<IbPortCounters>,
}

/// Reads the counters of every InfiniBand port.
#[derive(Debug)]
pub struct IbSource {
    ports: Vec<Port>,
    reader: TextReader,
    prev_time: Option<Instant>,
}

fn sorted_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

impl IbSource {
    /// Finds the ports; the error is the reason the source is unavailable.
    pub fn probe(sys_root: &Path) -> Result<Self, String> {
        let class = sys_root.join("class/infiniband");
        let devices = sorted_names(&class)
            .map_err(|_| format!("no InfiniBand devices ({} absent)", class.display()))?;
        let mut ports = Vec::new();
        for device in devices {
            let ports_dir = class.join(&device).join("ports");
            for port in sorted_names(&ports_dir).unwrap_or_default() {
                let Ok(n) = port.parse() else { continue };
                let dir = ports_dir.join(&port).join("counters");
                let files: Vec<(String, KeptFile)> = sorted_names(&dir)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|f| infiniband::is_known_counter(f))
                    .map(|f| {
                        let kept = KeptFile::new(dir.join(&f));
                        (f, kept)
                    })
                    .collect();
                if !files.is_empty() {
                    ports.push(Port {
                        device: device.clone(),
                        port: n,
                        files,
                        prev: None,
                    });
                }
            }
        }
        if ports.is_empty() {
            return Err(format!(
                "no InfiniBand port counters under {}",
                class.display()
            ));
        }
        Ok(IbSource {
            ports,
            reader: TextReader::default(),
            prev_time: None,
        })
    }

    /// Samples every port; unreadable counters are added to `notes`.
    pub fn sample(&mut self, now: Instant, notes: &mut Vec<String>) -> IbSample {
        let dt = self.prev_time.map(|t| now.duration_since(t).as_secs_f64());
        let mut out = Vec::with_capacity(self.ports.len());
        for port in &mut self.ports {
            let mut c = IbPortCounters::default();
            for (name, file) in &mut port.files {
                match file.read(&mut self.reader) {
                    Ok(text) => {
                        if let Err(e) = infiniband::parse_counter(&mut c, name, text) {
                            notes.push(e.in_file(file.path()).to_string());
                        }
                    }
                    Err(e) => notes.push(e.to_string()),
                }
            }
            let p = port.prev.as_ref();
            out.push(IbPortSample {
                device: port.device.clone(),
                port: port.port,
                rx_bytes_per_s: rate(p.and_then(|p| p.rcv_bytes()), c.rcv_bytes(), dt),
                tx_bytes_per_s: rate(p.and_then(|p| p.xmit_bytes()), c.xmit_bytes(), dt),
                rx_packets_per_s: rate(p.and_then(|p| p.rcv_packets), c.rcv_packets, dt),
                tx_packets_per_s: rate(p.and_then(|p| p.xmit_packets), c.xmit_packets, dt),
                counters: c.clone(),
            });
            port.prev = Some(c);
        }
        self.prev_time = Some(now);
        IbSample { ports: out }
    }
}
