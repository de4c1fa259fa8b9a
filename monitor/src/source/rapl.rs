//! RAPL energy per domain from the `powercap` framework
//! (`/sys/class/powercap/intel-rapl:*`, system-wide). Wraparound of
//! `energy_uj` at `max_energy_range_uj` is handled; see
//! [`crate::parse::rapl`].

use super::{KeptFile, TextReader};
use crate::parse::rapl;
use std::path::Path;
use std::time::Instant;

/// One domain at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct RaplDomainSample {
    /// Domain name, e.g. `package-0` or `package-0/dram`.
    pub name: String,
    /// The raw `energy_uj` reading.
    pub energy_uj: u64,
    /// Energy consumed since the sampler started, in joules (accumulated
    /// across wraps of the raw counter).
    pub energy_total_j: f64,
    /// Average power since the previous sample, in watts.
    pub power_w: Option<f64>,
}

/// Every domain at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct RaplSample {
    /// Domains ordered by their sysfs directory.
    pub domains: Vec<RaplDomainSample>,
}

#[derive(Debug)]
struct Domain {
    name: String,
    energy: KeptFile,
    max_range_uj: Option<u64>,
    prev_uj: Option<u64>,
    total_uj: u128,
}

/// Reads every RAPL domain.
#[derive(Debug)]
pub struct RaplSource {
    domains: Vec<Domain>,
    reader: TextReader,
    prev_time: Option<Instant>,
}

impl RaplSource {
    /// Finds the domains and checks `energy_uj` is readable; the error is
    /// the reason the source is unavailable.
    pub fn probe(sys_root: &Path) -> Result<Self, String> {
        let class = sys_root.join("class/powercap");
        let mut dirs: Vec<String> = std::fs::read_dir(&class)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| n.starts_with("intel-rapl:"))
                    .collect()
            })
            .unwrap_or_default();
        dirs.sort();
        if dirs.is_empty() {
            return Err(format!(
                "no RAPL domains ({}/intel-rapl:* absent)",
                class.display()
            ));
        }
        let mut reader = TextReader::default();
        let mut domains: Vec<Domain> = Vec::new();
        for d in &dirs {
            let dir = class.join(d);
            let parent = d
                .rsplit_once(':')
                .map(|(p, _)| p)
                .filter(|p| p.contains(':'))
                .and_then(|p| {
                    let pname = reader.read(&class.join(p).join("name")).ok()?;
                    Some(pname.trim().to_string())
                });
            let Ok(name_text) = reader.read(&dir.join("name")) else {
                continue;
            };
            let name = rapl::domain_name(name_text, parent.as_deref());
            let max_range_uj = reader
                .read(&dir.join("max_energy_range_uj"))
                .ok()
                .and_then(|t| rapl::parse_max_energy_range_uj(t).ok());
            domains.push(Domain {
                name,
                energy: KeptFile::new(dir.join("energy_uj")),
                max_range_uj,
                prev_uj: None,
                total_uj: 0,
            });
        }
        let Some(first) = domains.first() else {
            return Err(format!(
                "no readable RAPL domain names under {}",
                class.display()
            ));
        };
        if let Err(e) = reader.read(first.energy.path()) {
            return Err(if e.is_permission_denied() {
                format!(
                    "{} is readable by root only (Linux 5.10 and later)",
                    first.energy.path().display()
                )
            } else {
                e.to_string()
            });
        }
        Ok(RaplSource {
            domains,
            reader: TextReader::default(),
            prev_time: None,
        })
    }

    /// Samples every domain; unreadable domains are added to `notes`.
    pub fn sample(&mut self, now: Instant, notes: &mut Vec<String>) -> RaplSample {
        let dt = self.prev_time.map(|t| now.duration_since(t).as_secs_f64());
        let mut out = Vec::with_capacity(self.domains.len());
        for d in &mut self.domains {
            let uj = match d.energy.read(&mut self.reader) {
                Ok(t) => match rapl::parse_energy_uj(t) {
                    Ok(v) => v,
                    Err(e) => {
                        notes.push(e.in_file(d.energy.path()).to_string());
                        continue;
                    }
                },
                Err(e) => {
                    notes.push(e.to_string());
                    continue;
                }
            };
            let delta = d
                .prev_uj
                .and_then(|p| rapl::energy_delta_uj(p, uj, d.max_range_uj));
            if let Some(delta) = delta {
                d.total_uj += u128::from(delta);
            }
            out.push(RaplDomainSample {
                name: d.name.clone(),
                energy_uj: uj,
                energy_total_j: d.total_uj as f64 / 1e6,
                power_w: delta
                    .zip(dt.filter(|&t| t > 0.0))
                    .map(|(e, dt)| e as f64 / 1e6 / dt),
            });
            d.prev_uj = Some(uj);
        }
        self.prev_time = Some(now);
        RaplSample { domains: out }
    }
}
