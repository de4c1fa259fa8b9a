//! NVIDIA GPUs through NVML (`nvml-wrapper`). The NVML library
//! (`libnvidia-ml.so.1`) is loaded at run time, so the crate builds and
//! runs on machines without it; no library, no driver or no device makes
//! the source unavailable.
//!
//! [`convert`] turns NVML's answers for one device into a
//! [`GpuDeviceSample`] and needs no GPU: tests build [`NvmlAnswers`] from
//! literal values.

use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PcieUtilCounter, PerformancePolicy, TemperatureSensor,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::{
    BAR1MemoryInfo, MemoryInfo, ProcessInfo, Utilization, ViolationTime,
};
use nvml_wrapper::structs::device::UtilizationInfo;
use nvml_wrapper::{Device, Nvml};
use std::time::Instant;

/// A compute process using a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProcess {
    /// Process id.
    pub pid: u32,
    /// GPU memory it uses, in bytes, if NVML knows.
    pub used_memory_bytes: Option<u64>,
}

/// One GPU at one sample. Every field is `None` where the device or driver
/// does not support the query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuDeviceSample {
    /// NVML device index.
    pub index: u32,
    /// Percent of time a kernel was running.
    pub utilization_gpu_percent: Option<u32>,
    /// Percent of time device memory was read or written.
    pub utilization_memory_percent: Option<u32>,
    /// Encoder utilization in percent.
    pub encoder_percent: Option<u32>,
    /// Decoder utilization in percent.
    pub decoder_percent: Option<u32>,
    /// Device memory in use, bytes.
    pub memory_used_bytes: Option<u64>,
    /// Device memory installed, bytes.
    pub memory_total_bytes: Option<u64>,
    /// BAR1 memory in use, bytes.
    pub bar1_used_bytes: Option<u64>,
    /// BAR1 memory size, bytes.
    pub bar1_total_bytes: Option<u64>,
    /// Power draw now, milliwatts, as NVML reports it.
    pub power_mw: Option<u32>,
    /// Power draw now, watts.
    pub power_w: Option<f64>,
    /// Energy since the driver was loaded, joules (cumulative).
    pub energy_j: Option<f64>,
    /// Average power since the previous sample from the energy counter,
    /// watts.
    pub energy_power_w: Option<f64>,
    /// GPU temperature, degrees Celsius.
    pub temperature_c: Option<u32>,
    /// Fan 0 speed in percent of maximum.
    pub fan_percent: Option<u32>,
    /// Graphics clock, MHz.
    pub clock_graphics_mhz: Option<u32>,
    /// SM clock, MHz.
    pub clock_sm_mhz: Option<u32>,
    /// Memory clock, MHz.
    pub clock_memory_mhz: Option<u32>,
    /// PCIe transmit throughput, KB/s over a 20 ms window, as NVML reports
    /// it.
    pub pcie_tx_kb_s: Option<u32>,
    /// PCIe receive throughput, KB/s, as NVML reports it.
    pub pcie_rx_kb_s: Option<u32>,
    /// PCIe transmit throughput, bytes/s (NVML's KiB/s times 1024).
    pub pcie_tx_bytes_per_s: Option<f64>,
    /// PCIe receive throughput, bytes/s.
    pub pcie_rx_bytes_per_s: Option<f64>,
    /// Clock throttle reasons as NVML's bit mask.
    pub throttle_reasons: Option<u64>,
    /// Names of the set throttle reason bits.
    pub throttle_reason_names: Vec<&'static str>,
    /// Time clocks were held below the application clocks by any limit,
    /// ns (cumulative; NVML's `TOTAL_APP_CLOCKS` policy).
    pub violation_ns: Option<u64>,
    /// Time clocks were held down by the power limit, ns (cumulative).
    pub power_violation_ns: Option<u64>,
    /// Time clocks were held down by temperature, ns (cumulative).
    pub thermal_violation_ns: Option<u64>,
    /// Share of the last interval held down by the power limit, percent.
    pub power_violation_percent: Option<f64>,
    /// Share of the last interval held down by temperature, percent.
    pub thermal_violation_percent: Option<f64>,
    /// Corrected (single-bit) ECC errors over the device's life
    /// (aggregate counter).
    pub ecc_corrected: Option<u64>,
    /// Uncorrected (double-bit) ECC errors over the device's life.
    pub ecc_uncorrected: Option<u64>,
    /// Compute processes on the device.
    pub processes: Option<Vec<GpuProcess>>,
}

/// Every GPU at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSample {
    /// Devices by index.
    pub devices: Vec<GpuDeviceSample>,
}

/// NVML's answers for one device, as the `nvml-wrapper` calls return them.
#[derive(Debug)]
pub struct NvmlAnswers {
    /// Device index.
    pub index: u32,
    /// `utilization_rates`.
    pub utilization: Result<Utilization, NvmlError>,
    /// `encoder_utilization`.
    pub encoder: Result<UtilizationInfo, NvmlError>,
    /// `decoder_utilization`.
    pub decoder: Result<UtilizationInfo, NvmlError>,
    /// `memory_info`.
    pub memory: Result<MemoryInfo, NvmlError>,
    /// `bar1_memory_info`.
    pub bar1: Result<BAR1MemoryInfo, NvmlError>,
    /// `power_usage` (milliwatts).
    pub power_mw: Result<u32, NvmlError>,
    /// `total_energy_consumption` (millijoules).
    pub energy_mj: Result<u64, NvmlError>,
    /// `temperature(Gpu)` (degrees Celsius).
    pub temperature_c: Result<u32, NvmlError>,
    /// `fan_speed(0)` (percent).
    pub fan_percent: Result<u32, NvmlError>,
    /// `clock_info(Graphics)` (MHz).
    pub clock_graphics_mhz: Result<u32, NvmlError>,
    /// `clock_info(SM)` (MHz).
    pub clock_sm_mhz: Result<u32, NvmlError>,
    /// `clock_info(Memory)` (MHz).
    pub clock_memory_mhz: Result<u32, NvmlError>,
    /// `pcie_throughput(Send)` (KiB/s).
    pub pcie_tx_kib_s: Result<u32, NvmlError>,
    /// `pcie_throughput(Receive)` (KiB/s).
    pub pcie_rx_kib_s: Result<u32, NvmlError>,
    /// `current_throttle_reasons`.
    pub throttle_reasons: Result<ThrottleReasons, NvmlError>,
    /// `violation_status(Power)`.
    pub power_violation: Result<ViolationTime, NvmlError>,
    /// `violation_status(Thermal)`.
    pub thermal_violation: Result<ViolationTime, NvmlError>,
    /// `violation_status(TotalAppClocks)`.
    pub total_violation: Result<ViolationTime, NvmlError>,
    /// `total_ecc_errors(Corrected, Aggregate)`.
    pub ecc_corrected: Result<u64, NvmlError>,
    /// `total_ecc_errors(Uncorrected, Aggregate)`.
    pub ecc_uncorrected: Result<u64, NvmlError>,
    /// `running_compute_processes`.
    pub compute_processes: Result<Vec<ProcessInfo>, NvmlError>,
}

/// What [`convert`] keeps of a device's previous answers to compute rates.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuPrevious {
    /// Energy counter, mJ.
    pub energy_mj: Option<u64>,
    /// Power violation counter and its reference time (µs).
    pub power_violation: Option<(u64, u64)>,
    /// Thermal violation counter and its reference time (µs).
    pub thermal_violation: Option<(u64, u64)>,
}

/// NVML throttle reason bits and their names.
fn throttle_names(bits: u64) -> Vec<&'static str> {
    let table = [
        (ThrottleReasons::GPU_IDLE, "gpu_idle"),
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            "applications_clocks_setting",
        ),
        (ThrottleReasons::SW_POWER_CAP, "sw_power_cap"),
        (ThrottleReasons::HW_SLOWDOWN, "hw_slowdown"),
        (ThrottleReasons::SYNC_BOOST, "sync_boost"),
        (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw_thermal_slowdown"),
        (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw_thermal_slowdown"),
        (
            ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
            "hw_power_brake_slowdown",
        ),
        (
            ThrottleReasons::DISPLAY_CLOCK_SETTING,
            "display_clock_setting",
        ),
    ];
    table
        .iter()
        .filter(|(flag, _)| bits & flag.bits() != 0)
        .map(|(_, name)| *name)
        .collect()
}

/// Percentage of the interval between two violation readings during which
/// clocks were held down, using NVML's own reference clock (µs).
fn violation_percent(prev: Option<(u64, u64)>, cur: Option<(u64, u64)>) -> Option<f64> {
    let ((pv, pt), (cv, ct)) = (prev?, cur?);
    let dt_ns = ct.checked_sub(pt)?.checked_mul(1000)?;
    let dv = cv.checked_sub(pv)?;
    (dt_ns > 0).then(|| 100.0 * dv as f64 / dt_ns as f64)
}

/// Converts NVML's answers into a [`GpuDeviceSample`]. `prev` holds the
/// previous answers' counters and `dt_s` the wall time since then. Returns
/// the sample, what to keep for the next call, and one note per query that
/// failed (the sampler reports each once).
pub fn convert(
    a: NvmlAnswers,
    prev: Option<&GpuPrevious>,
    dt_s: Option<f64>,
) -> (GpuDeviceSample, GpuPrevious, Vec<String>) {
    let mut notes = Vec::new();
    let index = a.index;
    let mut ok = |what: &str, r: Result<(), &NvmlError>| {
        if let Err(e) = r {
            notes.push(match e {
                NvmlError::NotSupported => {
                    format!("GPU {index}: {what} is not supported by this device")
                }
                other => format!("GPU {index}: {what}: {other}"),
            });
        }
    };
    macro_rules! take {
        ($what:expr, $field:expr) => {{
            let r = $field;
            ok($what, r.as_ref().map(|_| ()));
            r.ok()
        }};
    }
    let util = take!("utilization", a.utilization);
    let enc = take!("encoder utilization", a.encoder);
    let dec = take!("decoder utilization", a.decoder);
    let mem = take!("memory info", a.memory);
    let bar1 = take!("BAR1 memory info", a.bar1);
    let power_mw = take!("power usage", a.power_mw);
    let energy_mj = take!("total energy consumption", a.energy_mj);
    let temp = take!("temperature", a.temperature_c);
    let fan = take!("fan speed", a.fan_percent);
    let cg = take!("graphics clock", a.clock_graphics_mhz);
    let cs = take!("SM clock", a.clock_sm_mhz);
    let cm = take!("memory clock", a.clock_memory_mhz);
    let tx = take!("PCIe TX throughput", a.pcie_tx_kib_s);
    let rx = take!("PCIe RX throughput", a.pcie_rx_kib_s);
    let thr = take!("throttle reasons", a.throttle_reasons);
    let pv = take!("power violation status", a.power_violation);
    let tv = take!("thermal violation status", a.thermal_violation);
    let total_v = take!("violation status (all limits)", a.total_violation);
    let eccc = take!("corrected ECC errors", a.ecc_corrected);
    let eccu = take!("uncorrected ECC errors", a.ecc_uncorrected);
    let procs = take!("compute processes", a.compute_processes);

    let pv = pv.map(|v| (v.violation_time, v.reference_time));
    let tv = tv.map(|v| (v.violation_time, v.reference_time));
    let energy_power_w = match (prev.and_then(|p| p.energy_mj), energy_mj, dt_s) {
        (Some(p), Some(c), Some(dt)) if c >= p && dt > 0.0 => Some((c - p) as f64 / 1000.0 / dt),
        _ => None,
    };
    let bits = thr.map(|t| t.bits());
    let sample = GpuDeviceSample {
        index,
        utilization_gpu_percent: util.as_ref().map(|u| u.gpu),
        utilization_memory_percent: util.as_ref().map(|u| u.memory),
        encoder_percent: enc.map(|e| e.utilization),
        decoder_percent: dec.map(|d| d.utilization),
        memory_used_bytes: mem.as_ref().map(|m| m.used),
        memory_total_bytes: mem.as_ref().map(|m| m.total),
        bar1_used_bytes: bar1.as_ref().map(|b| b.used),
        bar1_total_bytes: bar1.as_ref().map(|b| b.total),
        power_mw,
        power_w: power_mw.map(|p| f64::from(p) / 1000.0),
        energy_j: energy_mj.map(|e| e as f64 / 1000.0),
        energy_power_w,
        temperature_c: temp,
        fan_percent: fan,
        clock_graphics_mhz: cg,
        clock_sm_mhz: cs,
        clock_memory_mhz: cm,
        pcie_tx_kb_s: tx,
        pcie_rx_kb_s: rx,
        pcie_tx_bytes_per_s: tx.map(|k| f64::from(k) * 1024.0),
        pcie_rx_bytes_per_s: rx.map(|k| f64::from(k) * 1024.0),
        throttle_reasons: bits,
        throttle_reason_names: bits.map(throttle_names).unwrap_or_default(),
        violation_ns: total_v.map(|v| v.violation_time),
        power_violation_ns: pv.map(|v| v.0),
        thermal_violation_ns: tv.map(|v| v.0),
        power_violation_percent: violation_percent(prev.and_then(|p| p.power_violation), pv),
        thermal_violation_percent: violation_percent(prev.and_then(|p| p.thermal_violation), tv),
        ecc_corrected: eccc,
        ecc_uncorrected: eccu,
        processes: procs.map(|ps| {
            ps.into_iter()
                .map(|p| GpuProcess {
                    pid: p.pid,
                    used_memory_bytes: match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => Some(b),
                        UsedGpuMemory::Unavailable => None,
                    },
                })
                .collect()
        }),
    };
    let keep = GpuPrevious {
        energy_mj,
        power_violation: pv,
        thermal_violation: tv,
    };
    (sample, keep, notes)
}

/// Asks NVML everything [`convert`] needs about one device.
pub fn ask(device: &Device<'_>, index: u32) -> NvmlAnswers {
    NvmlAnswers {
        index,
        utilization: device.utilization_rates(),
        encoder: device.encoder_utilization(),
        decoder: device.decoder_utilization(),
        memory: device.memory_info(),
        bar1: device.bar1_memory_info(),
        power_mw: device.power_usage(),
        energy_mj: device.total_energy_consumption(),
        temperature_c: device.temperature(TemperatureSensor::Gpu),
        fan_percent: device.fan_speed(0),
        clock_graphics_mhz: device.clock_info(Clock::Graphics),
        clock_sm_mhz: device.clock_info(Clock::SM),
        clock_memory_mhz: device.clock_info(Clock::Memory),
        pcie_tx_kib_s: device.pcie_throughput(PcieUtilCounter::Send),
        pcie_rx_kib_s: device.pcie_throughput(PcieUtilCounter::Receive),
        throttle_reasons: device.current_throttle_reasons(),
        power_violation: device.violation_status(PerformancePolicy::Power),
        thermal_violation: device.violation_status(PerformancePolicy::Thermal),
        total_violation: device.violation_status(PerformancePolicy::TotalAppClocks),
        ecc_corrected: device.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate),
        ecc_uncorrected: device.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate),
        compute_processes: device.running_compute_processes(),
    }
}

/// Why NVML could not start, in words.
pub fn init_failure(e: &NvmlError) -> String {
    match e {
        NvmlError::LibloadingError(_) => {
            "NVML library libnvidia-ml.so.1 not found (no NVIDIA driver installed)".to_string()
        }
        NvmlError::DriverNotLoaded => "the NVIDIA driver is not loaded".to_string(),
        NvmlError::NoPermission => "no permission to talk to the NVIDIA driver".to_string(),
        other => format!("NVML initialisation failed: {other}"),
    }
}

/// Starts NVML and counts devices; `Err` is the reason GPUs are
/// unavailable.
pub fn init() -> Result<(Nvml, u32), String> {
    let nvml = Nvml::init().map_err(|e| init_failure(&e))?;
    let count = nvml
        .device_count()
        .map_err(|e| format!("NVML device count: {e}"))?;
    if count == 0 {
        return Err("no NVIDIA GPU found by NVML".to_string());
    }
    Ok((nvml, count))
}

/// Samples every NVIDIA GPU.
pub struct GpuSource {
    nvml: Nvml,
    count: u32,
    prev: Vec<Option<GpuPrevious>>,
    prev_time: Option<Instant>,
}

impl std::fmt::Debug for GpuSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuSource")
            .field("count", &self.count)
            .finish()
    }
}

impl GpuSource {
    /// Loads NVML; the error is the reason the source is unavailable.
    pub fn probe() -> Result<Self, String> {
        let (nvml, count) = init()?;
        Ok(GpuSource {
            nvml,
            count,
            prev: vec![None; count as usize],
            prev_time: None,
        })
    }

    /// Samples every device; failed queries are added to `notes`.
    pub fn sample(&mut self, now: Instant, notes: &mut Vec<String>) -> GpuSample {
        let dt = self.prev_time.map(|t| now.duration_since(t).as_secs_f64());
        let mut devices = Vec::with_capacity(self.count as usize);
        for i in 0..self.count {
            let device = match self.nvml.device_by_index(i) {
                Ok(d) => d,
                Err(e) => {
                    notes.push(format!("GPU {i}: {e}"));
                    continue;
                }
            };
            let answers = ask(&device, i);
            let slot = &mut self.prev[i as usize];
            let (sample, keep, n) = convert(answers, slot.as_ref(), dt);
            *slot = Some(keep);
            notes.extend(n);
            devices.push(sample);
        }
        self.prev_time = Some(now);
        GpuSample { devices }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(energy_mj: u64, power_violation_ns: u64, reference_us: u64) -> NvmlAnswers {
        NvmlAnswers {
            index: 0,
            utilization: Ok(Utilization {
                gpu: 87,
                memory: 41,
            }),
            encoder: Ok(UtilizationInfo {
                utilization: 3,
                sampling_period: 167_000,
            }),
            decoder: Err(NvmlError::NotSupported),
            memory: Ok(MemoryInfo {
                free: 60 << 30,
                reserved: 512 << 20,
                total: 80 << 30,
                used: 20 << 30,
                version: 0,
            }),
            bar1: Ok(BAR1MemoryInfo {
                free: 120 << 30,
                total: 128 << 30,
                used: 8 << 30,
            }),
            power_mw: Ok(312_500),
            energy_mj: Ok(energy_mj),
            temperature_c: Ok(64),
            fan_percent: Err(NvmlError::NotSupported),
            clock_graphics_mhz: Ok(1755),
            clock_sm_mhz: Ok(1755),
            clock_memory_mhz: Ok(2619),
            pcie_tx_kib_s: Ok(2048),
            pcie_rx_kib_s: Ok(1024),
            throttle_reasons: Ok(ThrottleReasons::SW_POWER_CAP | ThrottleReasons::GPU_IDLE),
            power_violation: Ok(ViolationTime {
                reference_time: reference_us,
                violation_time: power_violation_ns,
            }),
            thermal_violation: Err(NvmlError::NotSupported),
            total_violation: Ok(ViolationTime {
                reference_time: reference_us,
                violation_time: 2 * power_violation_ns,
            }),
            ecc_corrected: Ok(2),
            ecc_uncorrected: Ok(0),
            compute_processes: Ok(vec![ProcessInfo {
                pid: 4242,
                used_gpu_memory: UsedGpuMemory::Used(1 << 30),
                gpu_instance_id: None,
                compute_instance_id: None,
            }]),
        }
    }

    #[test]
    fn nvml_answers_become_a_device_sample_in_our_units() {
        let (s, _, _) = convert(answers(1_000_000, 0, 0), None, None);
        assert_eq!(s.utilization_gpu_percent, Some(87));
        assert_eq!(s.utilization_memory_percent, Some(41));
        assert_eq!(s.encoder_percent, Some(3));
        assert_eq!(s.memory_used_bytes, Some(20 << 30));
        assert_eq!(s.memory_total_bytes, Some(80 << 30));
        assert_eq!(s.bar1_used_bytes, Some(8 << 30));
        assert_eq!(s.power_w, Some(312.5));
        assert_eq!(s.power_mw, Some(312_500));
        assert_eq!((s.pcie_tx_kb_s, s.pcie_rx_kb_s), (Some(2048), Some(1024)));
        assert_eq!(s.energy_j, Some(1000.0));
        assert_eq!(s.temperature_c, Some(64));
        assert_eq!(
            (s.clock_graphics_mhz, s.clock_sm_mhz, s.clock_memory_mhz),
            (Some(1755), Some(1755), Some(2619))
        );
        assert_eq!(s.pcie_tx_bytes_per_s, Some(2048.0 * 1024.0));
        assert_eq!(s.pcie_rx_bytes_per_s, Some(1024.0 * 1024.0));
        assert_eq!(s.throttle_reason_names, vec!["gpu_idle", "sw_power_cap"]);
        assert_eq!(s.ecc_corrected, Some(2));
        assert_eq!(
            s.processes,
            Some(vec![GpuProcess {
                pid: 4242,
                used_memory_bytes: Some(1 << 30)
            }])
        );
    }

    #[test]
    fn unsupported_queries_are_none_and_noted_once_each() {
        let (s, _, notes) = convert(answers(0, 0, 0), None, None);
        assert_eq!(s.decoder_percent, None);
        assert_eq!(s.fan_percent, None);
        assert_eq!(s.thermal_violation_ns, None);
        assert_eq!(s.violation_ns, Some(0));
        assert_eq!(
            notes,
            vec![
                "GPU 0: decoder utilization is not supported by this device",
                "GPU 0: fan speed is not supported by this device",
                "GPU 0: thermal violation status is not supported by this device",
            ]
        );
    }

    #[test]
    fn the_second_answer_gives_average_power_and_violation_share() {
        let (first, keep, _) = convert(answers(1_000_000, 0, 1_000_000), None, None);
        assert_eq!(first.energy_power_w, None);
        assert_eq!(first.power_violation_percent, None);
        // 500 J in 2 s; held down 0.5 s of 2 s.
        let (second, _, _) = convert(
            answers(1_500_000, 500_000_000, 3_000_000),
            Some(&keep),
            Some(2.0),
        );
        assert_eq!(second.energy_power_w, Some(250.0));
        assert_eq!(second.power_violation_percent, Some(25.0));
    }

    #[test]
    fn a_missing_driver_is_described_without_error_jargon() {
        assert_eq!(
            init_failure(&NvmlError::DriverNotLoaded),
            "the NVIDIA driver is not loaded"
        );
    }
}
