//! `/proc/cpuinfo`: one block of `key\t: value` lines per logical CPU,
//! separated by blank lines. The keys differ between architectures (x86
//! has `vendor_id` and `model name`, arm64 has `CPU implementer` and `CPU
//! part`), so every field is an `Option`.

use super::number;
use crate::error::ParseError;

const FILE: &str = "/proc/cpuinfo";

/// One logical CPU as `/proc/cpuinfo` describes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Processor {
    /// `processor`: logical CPU number.
    pub index: u32,
    /// `vendor_id` (x86) or `CPU implementer` (arm64).
    pub vendor: Option<String>,
    /// `cpu family` (x86).
    pub family: Option<u32>,
    /// `model` (x86; a number).
    pub model: Option<u32>,
    /// `model name` (x86, some others).
    pub model_name: Option<String>,
    /// `stepping` (x86).
    pub stepping: Option<u32>,
    /// `cpu MHz`: current frequency (x86).
    pub mhz: Option<f64>,
    /// `physical id`: socket (x86).
    pub physical_id: Option<u32>,
    /// `core id` (x86).
    pub core_id: Option<u32>,
    /// `cache size` as printed, e.g. `1024 KB` (x86).
    pub cache_size: Option<String>,
    /// `flags` (x86) or `Features` (arm64).
    pub flags: Vec<String>,
}

/// Parses the text of `/proc/cpuinfo`. Blocks without a `processor` line
/// (the trailing summary some architectures print) are skipped.
pub fn parse(text: &str) -> Result<Vec<Processor>, ParseError> {
    let mut out = Vec::new();
    let mut cur: Option<Processor> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            if let Some(p) = cur.take() {
                out.push(p);
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(ParseError::new(FILE, n, "expected `key : value`"));
        };
        let (key, value) = (key.trim(), value.trim());
        if key == "processor" {
            if let Some(p) = cur.take() {
                out.push(p);
            }
            match value.parse() {
                Ok(index) => {
                    cur = Some(Processor {
                        index,
                        ..Processor::default()
                    })
                }
                // s390 prints `processor 0: version = ...` lines; not a CPU block.
                Err(_) => cur = None,
            }
            continue;
        }
        let Some(p) = cur.as_mut() else { continue };
        match key {
            "vendor_id" | "CPU implementer" => p.vendor = Some(value.to_string()),
            "cpu family" => p.family = Some(number(FILE, n, key, value)?),
            "model" => p.model = value.parse().ok(),
            "model name" => p.model_name = Some(value.to_string()),
            "stepping" => p.stepping = value.parse().ok(),
            "cpu MHz" => p.mhz = Some(number(FILE, n, key, value)?),
            "physical id" => p.physical_id = Some(number(FILE, n, key, value)?),
            "core id" => p.core_id = Some(number(FILE, n, key, value)?),
            "cache size" => p.cache_size = Some(value.to_string()),
            "flags" | "Features" => {
                p.flags = value.split_ascii_whitespace().map(str::to_string).collect()
            }
            _ => {}
        }
    }
    if let Some(p) = cur.take() {
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPYC: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\nmicrocode\t: 0x1000065\ncpu MHz\t\t: 2596.150\ncache size\t: 1024 KB\nphysical id\t: 0\nsiblings\t: 2\ncore id\t\t: 0\ncpu cores\t: 2\nflags\t\t: fpu vme avx2 avx512f\npower management:\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\ncpu MHz\t\t: 2596.151\ncache size\t: 1024 KB\nphysical id\t: 0\ncore id\t\t: 1\nflags\t\t: fpu vme avx2 avx512f\npower management:\n\n";

    #[test]
    fn an_x86_cpuinfo_gives_one_processor_per_block() {
        let p = parse(EPYC).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].vendor.as_deref(), Some("AuthenticAMD"));
        assert_eq!(
            (p[0].family, p[0].model, p[0].stepping),
            (Some(25), Some(17), Some(1))
        );
        assert_eq!(p[0].model_name.as_deref(), Some("AMD EPYC"));
        assert_eq!(p[1].mhz, Some(2596.151));
        assert_eq!((p[1].physical_id, p[1].core_id), (Some(0), Some(1)));
        assert!(p[0].flags.iter().any(|f| f == "avx512f"));
    }

    #[test]
    fn an_arm64_cpuinfo_without_x86_fields_leaves_them_none() {
        let text = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n";
        let p = parse(text).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].vendor.as_deref(), Some("0x41"));
        assert_eq!(p[0].family, None);
        assert_eq!(p[0].mhz, None);
        assert_eq!(p[0].model_name, None);
        assert_eq!(p[0].flags, vec!["fp", "asimd", "evtstrm"]);
    }

    #[test]
    fn a_malformed_frequency_is_an_error_naming_the_line() {
        let text = "processor\t: 0\ncpu MHz\t\t: fast\n";
        let e = parse(text).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/proc/cpuinfo", 2));
    }
}
