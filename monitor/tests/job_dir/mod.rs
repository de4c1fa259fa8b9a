//! A fixture job directory and an independent PNG reader, for the report
//! tests.
//!
//! The fixture has two CPU hosts with nested series, missing values, a
//! series shorter and one longer than its time stamps, a metadata array, an
//! all-zero series and a unit that needs CSV quoting; and a GPU group of two
//! GPUs. Its job name is hostile HTML.

#![allow(dead_code)]

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// Start of the fixture job, Unix seconds.
pub const START: f64 = 1_763_700_000.0;

/// The fixture job's name: it must come out escaped.
pub const HOSTILE_NAME: &str = "<script>alert(\"owned\")</script> & <b>co</b>";

/// Writes the fixture's `metrics/` into `dir`.
pub fn write_fixture(dir: &Path) {
    let metrics = dir.join("metrics");
    fs::create_dir_all(&metrics).unwrap();
    let cpu = json!({
        "host_names": ["nodeA", "nodeB"],
        "sampling_frequency": 1.0,
        "units": {
            "cpu_percent": "%",
            "memory_rss": "bytes",
            "rapl_powercap.package-0": "W",
            "rapl_powercap.dram-0": "W",
            "only_b": "count, \"raw\"",
            "idle": ""
        },
        "nodeA": {
            "time_stamps": [START, START + 1.0, START + 2.0],
            "cpu_percent": [10.0, 20.5, null],
            "memory_rss": [1000, 2000, 3000],
            "rapl_powercap": {"package-0": [50.5, 60, 70], "dram-0": [1, 2, 3]},
            "child_proc_md": ["mpirun", "a.out"],
            "idle": [0, 0, 0]
        },
        "nodeB": {
            "time_stamps": [START + 0.25, START + 1.25, START + 2.25],
            "cpu_percent": [5, 6],
            "memory_rss": [10, 20, 30, 40],
            "only_b": [1, 2, 3]
        }
    });
    let gpu = json!({
        "host_names": ["gpu-0.nodeA", "gpu-1.nodeA"],
        "sampling_frequency": 1.0,
        "units": {"power": "W", "utilization.gpu": "%"},
        "gpu-0.nodeA": {
            "time_stamps": [START, START + 1.0, START + 2.0],
            "power": [100, 250, 240],
            "utilization": {"gpu": [0, 90, 95]}
        },
        "gpu-1.nodeA": {
            "time_stamps": [START, START + 1.0, START + 2.0],
            "power": [90, 200, 260],
            "utilization": {"gpu": [0, 80, null]}
        }
    });
    let meta = json!({
        "job_id": "1234",
        "scheduler": "slurm",
        "name": HOSTILE_NAME,
        "system": "testsys",
        "partition": "batch",
        "env": "production",
        "launcher": "srun",
        "user": "alice",
        "start_time": START,
        "end_time": START + 3723.0,
        "sampling_frequency": 1.0,
        "command": ["mpirun", "-np", "2", "./matmul"],
        "exit_status": 0,
        "host_names": ["nodeA", "nodeB"],
        "nodeA": {
            "cpu": {"model": "Xeon Test 9999", "cores": 64},
            "memory": {"total": 268435456000u64},
            "gpus": [{"name": "H100", "index": 0}],
            "unavailable": ["perf: perf_event_paranoid is 3", "ib: no InfiniBand port"]
        },
        "nodeB": {"cpu": {"model": "Xeon Test 9999", "cores": 64}}
    });
    fs::write(metrics.join("cpu_metrics.json"), cpu.to_string()).unwrap();
    fs::write(metrics.join("nv_gpu_metrics.json"), gpu.to_string()).unwrap();
    fs::write(metrics.join("meta_data.json"), meta.to_string()).unwrap();
}

/// A decoded 8-bit RGB or RGBA PNG, as RGB pixels.
pub struct Png {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<[u8; 3]>,
}

impl Png {
    /// How many pixels have exactly `color`.
    pub fn count(&self, color: [u8; 3]) -> usize {
        self.pixels.iter().filter(|p| **p == color).count()
    }

    /// How many pixels are not white.
    pub fn inked(&self) -> usize {
        self.pixels
            .iter()
            .filter(|p| **p != [255, 255, 255])
            .count()
    }
}

/// Reads a PNG, checking the signature, every chunk's CRC and the IHDR;
/// undoes all five row filters.
pub fn decode_png(bytes: &[u8]) -> Result<Png, String> {
    const SIGNATURE: [u8; 8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A];
    if bytes.len() < 8 || bytes[..8] != SIGNATURE {
        return Err("no PNG signature".into());
    }
    let table = crc_table();
    let (mut pos, mut ihdr, mut idat, mut ended) = (8, None, Vec::new(), false);
    while pos + 12 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        let body = bytes
            .get(pos + 4..pos + 8 + len)
            .ok_or("chunk runs past the end")?;
        let crc = u32::from_be_bytes(
            bytes
                .get(pos + 8 + len..pos + 12 + len)
                .ok_or("no CRC")?
                .try_into()
                .unwrap(),
        );
        let mut c = !0u32;
        for &b in body {
            c = table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
        }
        let kind = std::str::from_utf8(&body[..4]).unwrap_or("?").to_string();
        if !c != crc {
            return Err(format!("bad CRC in chunk {kind}"));
        }
        let data = &body[4..];
        match kind.as_str() {
            "IHDR" => ihdr = Some(data.to_vec()),
            "IDAT" => idat.extend_from_slice(data),
            "IEND" => ended = true,
            _ => {}
        }
        pos += 12 + len;
    }
    if !ended {
        return Err("no IEND chunk".into());
    }
    let ihdr = ihdr.ok_or("no IHDR chunk")?;
    let width = u32::from_be_bytes(ihdr[0..4].try_into().unwrap()) as usize;
    let height = u32::from_be_bytes(ihdr[4..8].try_into().unwrap()) as usize;
    let channels = match (ihdr[8], ihdr[9], ihdr[12]) {
        (8, 2, 0) => 3,
        (8, 6, 0) => 4,
        other => return Err(format!("unsupported depth/colour/interlace {other:?}")),
    };
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&idat)
        .map_err(|e| format!("IDAT does not inflate: {e:?}"))?;
    let stride = width * channels;
    if raw.len() != height * (stride + 1) {
        return Err(format!(
            "IDAT holds {} bytes, expected {}",
            raw.len(),
            height * (stride + 1)
        ));
    }
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(width * height);
    for row in raw.chunks(stride + 1) {
        let mut cur = row[1..].to_vec();
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let b = prev[i];
            let c = if i >= channels { prev[i - channels] } else { 0 };
            let add = match row[0] {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => return Err(format!("unknown filter type {f}")),
            };
            cur[i] = cur[i].wrapping_add(add);
        }
        for px in cur.chunks(channels) {
            pixels.push([px[0], px[1], px[2]]);
        }
        prev = cur;
    }
    Ok(Png {
        width,
        height,
        pixels,
    })
}

fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    for (n, entry) in table.iter_mut().enumerate() {
        let mut c = n as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *entry = c;
    }
    table
}

/// How long Chromium may take before the test gives up on it.
const PATIENCE: Duration = Duration::from_secs(120);

/// Runs headless Chromium on `page` with `args` (and a fresh profile in
/// `profile`); fails the test when it cannot start, fails or hangs.
pub fn chromium(profile: &Path, args: &[&str], page: &Path) -> Output {
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium is needed for this test (Debian: apt-get install chromium)");
    // Read the pipes on threads so a full pipe cannot stall Chromium.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stderr.read_to_end(&mut buf).map(|_| buf)
    });
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if began.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = Output {
        status,
        stdout: out_reader.join().unwrap().unwrap(),
        stderr: err_reader.join().unwrap().unwrap(),
    };
    assert!(
        out.status.success(),
        "chromium failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
