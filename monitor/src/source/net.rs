//! Network interface counters from `/proc/net/dev` (system-wide).

use super::{rate, KeptFile, TextReader};
use crate::parse::net_dev::{self, NetDevice};
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

/// One interface at one sample: raw counters and rates.
#[derive(Debug, Clone, PartialEq)]
pub struct NetInterfaceSample {
    /// Raw cumulative counters.
    pub counters: NetDevice,
    /// Bytes received per second.
    pub rx_bytes_per_s: Option<f64>,
    /// Bytes transmitted per second.
    pub tx_bytes_per_s: Option<f64>,
    /// Packets received per second.
    pub rx_packets_per_s: Option<f64>,
    /// Packets transmitted per second.
    pub tx_packets_per_s: Option<f64>,
}

/// Every interface at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct NetSample {
    /// Interfaces in `/proc/net/dev` order.
    pub interfaces: Vec<NetInterfaceSample>,
}

/// Reads `/proc/net/dev`.
#[derive(Debug)]
pub struct NetSource {
    file: KeptFile,
    reader: TextReader,
    prev: HashMap<String, NetDevice>,
    prev_time: Option<Instant>,
}

impl NetSource {
    /// Checks that `/proc/net/dev` parses.
    pub fn probe(proc_root: &Path) -> Result<Self, String> {
        let path = proc_root.join("net/dev");
        let mut reader = TextReader::default();
        let text = reader.read(&path).map_err(|e| e.to_string())?;
        net_dev::parse(text).map_err(|e| e.in_file(&path).to_string())?;
        Ok(NetSource {
            file: KeptFile::new(path),
            reader,
            prev: HashMap::new(),
            prev_time: None,
        })
    }

    /// Samples; a read or parse failure is added to `notes`.
    pub fn sample(&mut self, now: Instant, notes: &mut Vec<String>) -> Option<NetSample> {
        let devices = match self.file.read(&mut self.reader) {
            Ok(t) => match net_dev::parse(t) {
                Ok(d) => d,
                Err(e) => {
                    notes.push(e.in_file(self.file.path()).to_string());
                    return None;
                }
            },
            Err(e) => {
                notes.push(e.to_string());
                return None;
            }
        };
        let dt = self.prev_time.map(|t| now.duration_since(t).as_secs_f64());
        let interfaces = devices
            .into_iter()
            .map(|d| {
                let p = self.prev.get(&d.name);
                NetInterfaceSample {
                    rx_bytes_per_s: rate(p.map(|p| p.rx_bytes), Some(d.rx_bytes), dt),
                    tx_bytes_per_s: rate(p.map(|p| p.tx_bytes), Some(d.tx_bytes), dt),
                    rx_packets_per_s: rate(p.map(|p| p.rx_packets), Some(d.rx_packets), dt),
                    tx_packets_per_s: rate(p.map(|p| p.tx_packets), Some(d.tx_packets), dt),
                    counters: d,
                }
            })
            .collect::<Vec<_>>();
        self.prev = interfaces
            .iter()
            .map(|i| (i.counters.name.clone(), i.counters.clone()))
            .collect();
        self.prev_time = Some(now);
        Some(NetSample { interfaces })
    }
}
