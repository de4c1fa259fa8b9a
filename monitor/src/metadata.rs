//! Hardware metadata, gathered once per run: host name and kernel
//! (`uname(2)`), CPU model and topology (`/proc/cpuinfo`,
//! `/sys/devices/system/cpu/cpu<N>/{topology,cache}`), memory
//! (`/proc/meminfo`), NUMA nodes (`/sys/devices/system/node`) and the GPU
//! inventory (NVML).

use crate::parse::{cpuinfo, meminfo, sysfs};
use crate::source::gpu;
use nvml_wrapper::enum_wrappers::device::Clock;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What `uname(2)` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelInfo {
    /// Operating system name (`Linux`).
    pub sysname: String,
    /// Kernel release (`6.1.0-18-amd64`).
    pub release: String,
    /// Kernel build version string.
    pub version: String,
    /// Hardware name (`x86_64`).
    pub machine: String,
}

/// One kind of cache (level and type), summed over its instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheInfo {
    /// Level (1, 2, 3...).
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size of one instance in bytes.
    pub size_bytes: Option<u64>,
    /// Number of instances in the system.
    pub instances: usize,
    /// Logical CPUs sharing one instance.
    pub shared_by_cpus: usize,
}

/// The processors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuSummary {
    /// Vendor (`GenuineIntel`, `AuthenticAMD`, an arm64 implementer code).
    pub vendor: Option<String>,
    /// Model name.
    pub model_name: Option<String>,
    /// x86 family.
    pub family: Option<u32>,
    /// x86 model.
    pub model: Option<u32>,
    /// x86 stepping.
    pub stepping: Option<u32>,
    /// Sockets (physical packages).
    pub sockets: usize,
    /// Physical cores.
    pub cores: usize,
    /// Logical CPUs (hardware threads) online.
    pub threads: usize,
    /// Caches.
    pub caches: Vec<CacheInfo>,
}

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaNode {
    /// Node number.
    pub id: u32,
    /// Its CPUs.
    pub cpus: Vec<u32>,
    /// Its memory in bytes.
    pub memory_total_bytes: Option<u64>,
}

/// One GPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuInfo {
    /// NVML index.
    pub index: u32,
    /// Product name.
    pub name: Option<String>,
    /// UUID.
    pub uuid: Option<String>,
    /// PCI bus id.
    pub pci_bus_id: Option<String>,
    /// Device memory in bytes.
    pub memory_total_bytes: Option<u64>,
    /// Enforced power limit in watts.
    pub power_limit_w: Option<f64>,
    /// Maximum graphics clock, MHz.
    pub max_clock_graphics_mhz: Option<u32>,
    /// Maximum SM clock, MHz.
    pub max_clock_sm_mhz: Option<u32>,
    /// Maximum memory clock, MHz.
    pub max_clock_memory_mhz: Option<u32>,
    /// CUDA compute capability, e.g. `9.0`.
    pub compute_capability: Option<String>,
}

/// Everything [`hardware_metadata`] finds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HardwareMetadata {
    /// Host name.
    pub hostname: Option<String>,
    /// Kernel.
    pub kernel: Option<KernelInfo>,
    /// Processors.
    pub cpu: CpuSummary,
    /// `MemTotal` in bytes.
    pub memory_total_bytes: Option<u64>,
    /// `SwapTotal` in bytes.
    pub swap_total_bytes: Option<u64>,
    /// NUMA nodes (empty without NUMA support in the kernel).
    pub numa_nodes: Vec<NumaNode>,
    /// GPUs.
    pub gpus: Vec<GpuInfo>,
    /// NVIDIA driver version.
    pub gpu_driver_version: Option<String>,
    /// Why there is no GPU inventory, if there is none.
    pub gpu_unavailable: Option<String>,
}

impl HardwareMetadata {
    /// The metadata as a JSON object.
    pub fn to_json_value(&self) -> Value {
        let c = &self.cpu;
        json!({
            "hostname": self.hostname,
            "kernel": self.kernel.as_ref().map(|k| json!({
                "sysname": k.sysname,
                "release": k.release,
                "version": k.version,
                "machine": k.machine,
            })),
            "cpu": {
                "vendor": c.vendor,
                "model_name": c.model_name,
                "family": c.family,
                "model": c.model,
                "stepping": c.stepping,
                "sockets": c.sockets,
                "cores": c.cores,
                "threads": c.threads,
                "caches": c.caches.iter().map(|k| json!({
                    "level": k.level,
                    "type": k.kind,
                    "size_bytes": k.size_bytes,
                    "instances": k.instances,
                    "shared_by_cpus": k.shared_by_cpus,
                })).collect::<Vec<_>>(),
            },
            "memory_total_bytes": self.memory_total_bytes,
            "swap_total_bytes": self.swap_total_bytes,
            "numa_nodes": self.numa_nodes.iter().map(|n| json!({
                "id": n.id,
                "cpus": n.cpus,
                "memory_total_bytes": n.memory_total_bytes,
            })).collect::<Vec<_>>(),
            "gpus": self.gpus.iter().map(|g| json!({
                "index": g.index,
                "name": g.name,
                "uuid": g.uuid,
                "pci_bus_id": g.pci_bus_id,
                "memory_total_bytes": g.memory_total_bytes,
                "power_limit_w": g.power_limit_w,
                "max_clock_graphics_mhz": g.max_clock_graphics_mhz,
                "max_clock_sm_mhz": g.max_clock_sm_mhz,
                "max_clock_memory_mhz": g.max_clock_memory_mhz,
                "compute_capability": g.compute_capability,
            })).collect::<Vec<_>>(),
            "gpu_driver_version": self.gpu_driver_version,
            "gpu_unavailable": self.gpu_unavailable,
        })
    }
}

/// Metadata of this machine, GPUs included.
pub fn hardware_metadata() -> HardwareMetadata {
    hardware_metadata_from(Path::new("/proc"), Path::new("/sys"), true)
}

/// Metadata read from the given procfs and sysfs roots; `with_gpus` asks
/// NVML for the GPU inventory. Host name and kernel always come from
/// `uname(2)`.
pub fn hardware_metadata_from(
    proc_root: &Path,
    sys_root: &Path,
    with_gpus: bool,
) -> HardwareMetadata {
    let kernel = uname();
    let mut md = HardwareMetadata {
        hostname: kernel.as_ref().map(|k| k.0.clone()),
        kernel: kernel.map(|k| k.1),
        cpu: cpu_summary(proc_root, sys_root),
        ..HardwareMetadata::default()
    };
    if let Some(m) = std::fs::read_to_string(proc_root.join("meminfo"))
        .ok()
        .and_then(|t| meminfo::parse(&t).ok())
    {
        md.memory_total_bytes = Some(m.mem_total);
        md.swap_total_bytes = m.swap_total;
    }
    md.numa_nodes = numa_nodes(sys_root);
    if with_gpus {
        match gpu_inventory() {
            Ok((gpus, driver)) => {
                md.gpus = gpus;
                md.gpu_driver_version = driver;
            }
            Err(reason) => md.gpu_unavailable = Some(reason),
        }
    } else {
        md.gpu_unavailable = Some("GPU inventory not requested".to_string());
    }
    md
}

/// A NUL-terminated `uname` field (up to its end if the NUL is missing).
fn c_field(field: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `(nodename, kernel)` from `uname(2)`.
fn uname() -> Option<(String, KernelInfo)> {
    // SAFETY: utsname is plain data; uname fills it and returns 0 on success.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    Some((
        c_field(&u.nodename),
        KernelInfo {
            sysname: c_field(&u.sysname),
            release: c_field(&u.release),
            version: c_field(&u.version),
            machine: c_field(&u.machine),
        },
    ))
}

fn read_trim(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn numbered_dirs(dir: &Path, prefix: &str) -> Vec<u32> {
    let mut v: Vec<u32> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_prefix(prefix))
                        .and_then(|n| n.parse().ok())
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

fn cpu_summary(proc_root: &Path, sys_root: &Path) -> CpuSummary {
    let procs = std::fs::read_to_string(proc_root.join("cpuinfo"))
        .ok()
        .and_then(|t| cpuinfo::parse(&t).ok())
        .unwrap_or_default();
    let first = procs.first();
    let cpu_dir = sys_root.join("devices/system/cpu");
    let online = read_trim(&cpu_dir.join("online"))
        .and_then(|t| sysfs::parse_cpu_list("online", &t).ok())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| {
            let dirs = numbered_dirs(&cpu_dir, "cpu");
            if dirs.is_empty() {
                procs.iter().map(|p| p.index).collect()
            } else {
                dirs
            }
        });

    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    // (level, type, shared list) -> size
    let mut caches: BTreeMap<(u32, String, String), Option<u64>> = BTreeMap::new();
    for &cpu in &online {
        let dir = cpu_dir.join(format!("cpu{cpu}"));
        let pkg = read_trim(&dir.join("topology/physical_package_id"))
            .and_then(|t| t.parse::<i64>().ok())
            .or_else(|| {
                procs
                    .iter()
                    .find(|p| p.index == cpu)
                    .and_then(|p| p.physical_id.map(i64::from))
            });
        let core = read_trim(&dir.join("topology/core_id"))
            .and_then(|t| t.parse::<i64>().ok())
            .or_else(|| {
                procs
                    .iter()
                    .find(|p| p.index == cpu)
                    .and_then(|p| p.core_id.map(i64::from))
            });
        if let Some(p) = pkg {
            packages.insert(p);
            if let Some(c) = core {
                cores.insert((p, c));
            }
        }
        for idx in numbered_dirs(&dir.join("cache"), "index") {
            let cdir = dir.join(format!("cache/index{idx}"));
            let (Some(level), Some(kind)) = (
                read_trim(&cdir.join("level")).and_then(|t| t.parse().ok()),
                read_trim(&cdir.join("type")),
            ) else {
                continue;
            };
            let shared =
                read_trim(&cdir.join("shared_cpu_list")).unwrap_or_else(|| cpu.to_string());
            let size =
                read_trim(&cdir.join("size")).and_then(|t| sysfs::parse_size("size", &t).ok());
            caches.insert((level, kind, shared), size);
        }
    }
    let mut summary: BTreeMap<(u32, String), CacheInfo> = BTreeMap::new();
    for ((level, kind, shared), size) in caches {
        let sharing = sysfs::parse_cpu_list("shared_cpu_list", &shared)
            .map(|v| v.len())
            .unwrap_or(1);
        let e = summary.entry((level, kind.clone())).or_insert(CacheInfo {
            level,
            kind,
            size_bytes: size,
            instances: 0,
            shared_by_cpus: sharing,
        });
        e.instances += 1;
    }
    let threads = online.len();
    CpuSummary {
        vendor: first.and_then(|p| p.vendor.clone()),
        model_name: first.and_then(|p| p.model_name.clone()),
        family: first.and_then(|p| p.family),
        model: first.and_then(|p| p.model),
        stepping: first.and_then(|p| p.stepping),
        sockets: packages.len().max(usize::from(threads > 0)),
        cores: if cores.is_empty() {
            threads
        } else {
            cores.len()
        },
        threads,
        caches: summary.into_values().collect(),
    }
}

fn numa_nodes(sys_root: &Path) -> Vec<NumaNode> {
    let dir = sys_root.join("devices/system/node");
    numbered_dirs(&dir, "node")
        .into_iter()
        .map(|id| {
            let ndir = dir.join(format!("node{id}"));
            NumaNode {
                id,
                cpus: read_trim(&ndir.join("cpulist"))
                    .and_then(|t| sysfs::parse_cpu_list("cpulist", &t).ok())
                    .unwrap_or_default(),
                memory_total_bytes: std::fs::read_to_string(ndir.join("meminfo"))
                    .ok()
                    .and_then(|t| sysfs::parse_node_mem_total(&t).ok().flatten()),
            }
        })
        .collect()
}

fn gpu_inventory() -> Result<(Vec<GpuInfo>, Option<String>), String> {
    let (nvml, count) = gpu::init()?;
    let driver = nvml.sys_driver_version().ok();
    let mut gpus = Vec::new();
    for index in 0..count {
        let Ok(d) = nvml.device_by_index(index) else {
            continue;
        };
        gpus.push(GpuInfo {
            index,
            name: d.name().ok(),
            uuid: d.uuid().ok(),
            pci_bus_id: d.pci_info().ok().map(|p| p.bus_id),
            memory_total_bytes: d.memory_info().ok().map(|m| m.total),
            power_limit_w: d
                .enforced_power_limit()
                .ok()
                .map(|mw| f64::from(mw) / 1000.0),
            max_clock_graphics_mhz: d.max_clock_info(Clock::Graphics).ok(),
            max_clock_sm_mhz: d.max_clock_info(Clock::SM).ok(),
            max_clock_memory_mhz: d.max_clock_info(Clock::Memory).ok(),
            compute_capability: d
                .cuda_compute_capability()
                .ok()
                .map(|c| format!("{}.{}", c.major, c.minor)),
        });
    }
    Ok((gpus, driver))
}
