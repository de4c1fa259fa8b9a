//! Event groups shipped with the library (the files under `groups/`) and
//! loading of more from a directory. See [`crate::parse::group`] for the
//! format and `groups/README.md` for the sources of the event codes.

use crate::error::{Error, ParseError};
use crate::parse::group::{self, EventGroup};
use crate::source::perf::{CpuId, GroupSelection};
use std::path::Path;

/// One built-in group: `(name, path, text)`.
macro_rules! group {
    ($dir:literal, $name:literal) => {
        (
            $name,
            concat!("groups/", $dir, "/", $name, ".txt"),
            include_str!(concat!("../groups/", $dir, "/", $name, ".txt")),
        )
    };
}

const BUILTIN: &[(&str, &str, &str)] = &[
    group!("broadwell", "FLOPS_DP"),
    group!("broadwell", "FLOPS_SP"),
    group!("broadwell", "L2"),
    group!("broadwell", "L3"),
    group!("haswell", "FLOPS_DP"),
    group!("haswell", "FLOPS_SP"),
    group!("haswell", "L2"),
    group!("haswell", "L3"),
    group!("intel", "MEM"),
    group!("sandybridge", "FLOPS_DP"),
    group!("sandybridge", "FLOPS_SP"),
    group!("sandybridge", "L2"),
    group!("sandybridge", "L3"),
    group!("skylake", "FLOPS_DP"),
    group!("skylake", "FLOPS_SP"),
    group!("skylake", "L2"),
    group!("skylake", "L3"),
    group!("skylake_sp", "FLOPS_DP"),
    group!("skylake_sp", "FLOPS_SP"),
    group!("skylake_sp", "L2"),
    group!("skylake_sp", "L3"),
    group!("zen", "FLOPS_DP"),
    group!("zen", "FLOPS_SP"),
    group!("zen", "L2"),
    group!("zen", "L3"),
    group!("zen", "MEM"),
    group!("zen3", "FLOPS"),
    group!("zen3", "L2"),
    group!("zen3", "L3"),
    group!("zen3", "MEM"),
];

/// The groups compiled into the library, for every processor family.
pub fn builtin() -> Result<Vec<EventGroup>, ParseError> {
    BUILTIN
        .iter()
        .map(|(name, file, text)| group::parse(name, file, text))
        .collect()
}

/// The names of the built-in groups, each once, sorted (`FLOPS`,
/// `FLOPS_DP`, `FLOPS_SP`, `L2`, `L3`, `MEM`).
pub fn builtin_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = BUILTIN.iter().map(|(n, _, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The groups of `known` that apply to processor `cpu` under `selection`,
/// and a note for each named group that does not exist for it.
pub fn select<'g>(
    known: &'g [EventGroup],
    cpu: Option<&CpuId>,
    selection: &GroupSelection,
) -> (Vec<&'g EventGroup>, Vec<String>) {
    let fits = |g: &EventGroup| cpu.is_some_and(|c| g.matches(&c.vendor, c.family, c.model));
    match selection {
        GroupSelection::None => (Vec::new(), Vec::new()),
        GroupSelection::Matching => (known.iter().filter(|g| fits(g)).collect(), Vec::new()),
        GroupSelection::Named(names) => {
            let mut notes = Vec::new();
            let mut out = Vec::new();
            for n in names {
                match known.iter().find(|g| &g.name == n && fits(g)) {
                    Some(g) => out.push(g),
                    None => notes.push(format!(
                        "group {n}: no group of that name for this processor{}",
                        cpu.and_then(micro_architecture)
                            .map(|m| format!(" ({m})"))
                            .unwrap_or_default()
                    )),
                }
            }
            (out, notes)
        }
    }
}

/// The micro-architecture of an x86 processor, named as perfmon names its
/// event lists (`sandybridge`, `haswell`, `broadwell`, `skylake`,
/// `skylake_avx512`, `zen`, `zen3`...); `None` for others.
pub fn micro_architecture(cpu: &CpuId) -> Option<&'static str> {
    let m = cpu.model;
    Some(match (cpu.vendor.as_str(), cpu.family) {
        ("GenuineIntel", 6) => match m {
            0x2a | 0x2d => "sandybridge",
            0x3a | 0x3e => "ivybridge",
            0x3c | 0x3f | 0x45 | 0x46 => "haswell",
            0x3d | 0x47 | 0x4f | 0x56 => "broadwell",
            0x4e | 0x5e | 0x8e | 0x9e | 0xa5 | 0xa6 => "skylake",
            0x55 => "skylake_avx512",
            0x6a | 0x6c => "icelake_server",
            _ => return None,
        },
        ("AuthenticAMD", 0x17) if m < 0x30 => "zen",
        ("AuthenticAMD", 0x17) => "zen2",
        ("AuthenticAMD", 0x19) if (0x10..0x20).contains(&m) || m >= 0x60 => "zen4",
        ("AuthenticAMD", 0x19) => "zen3",
        _ => return None,
    })
}

impl GroupSelection {
    /// Parses the `--perf-groups` value: `all` (every group for this
    /// processor), `none`, or a comma-separated list of group names.
    pub fn parse(text: &str) -> Result<GroupSelection, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(GroupSelection::Matching);
        }
        if t.eq_ignore_ascii_case("none") {
            return Ok(GroupSelection::None);
        }
        let known = builtin_names();
        let mut names = Vec::new();
        for n in t.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let Some(k) = known.iter().find(|k| k.eq_ignore_ascii_case(n)) else {
                return Err(format!(
                    "`{n}` is not an event group; expected all, none, or a list of {}",
                    known.join(", ")
                ));
            };
            if !names.iter().any(|x: &String| x == k) {
                names.push(k.to_string());
            }
        }
        if names.is_empty() {
            return Err("no event group named; expected all, none, or a list of names".into());
        }
        Ok(GroupSelection::Named(names))
    }
}

/// Loads every `*.txt` file of `dir` and of its immediate subdirectories
/// as a group named after the file.
pub fn load_dir(dir: &Path) -> Result<Vec<EventGroup>, Error> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Ok(sub) = std::fs::read_dir(&p) {
                files.extend(sub.flatten().map(|e| e.path()));
            }
        } else {
            files.push(p);
        }
    }
    files.retain(|p| p.extension().is_some_and(|x| x == "txt"));
    files.sort();
    let mut out = Vec::new();
    for p in files {
        let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
        let name = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        out.push(group::parse(&name, &p.display().to_string(), &text)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_group_parses() {
        let groups = builtin().unwrap();
        assert_eq!(groups.len(), BUILTIN.len());
    }

    #[test]
    fn the_zen_double_precision_group_uses_event_3_with_the_dp_unit_mask() {
        let groups = builtin().unwrap();
        let g = groups
            .iter()
            .find(|g| g.name == "FLOPS_DP" && g.matches("AuthenticAMD", 0x17, 0x31))
            .unwrap();
        assert_eq!(g.events[0].spec, group::EventSpec::Raw { config: 0xf003 });
    }

    #[test]
    fn the_skylake_sp_group_weights_packed_instructions_by_width() {
        let groups = builtin().unwrap();
        let g = groups
            .iter()
            .find(|g| g.name == "FLOPS_DP" && g.matches("GenuineIntel", 6, 0x55))
            .unwrap();
        let configs: Vec<_> = g.events.iter().map(|e| e.spec).collect();
        assert_eq!(
            configs,
            [0x01c7, 0x04c7, 0x10c7, 0x40c7].map(|config| group::EventSpec::Raw { config })
        );
        // 1 scalar + 1 x 128-bit (2) + 1 x 256-bit (4) + 1 x 512-bit (8) in 1 s.
        let m = g.evaluate(&|_| Some(1.0e6), 1.0);
        assert_eq!(m[0].0, "DP");
        assert_eq!(m[0].2, Some(15.0));
    }

    /// The first processor of a literal `/proc/cpuinfo` text.
    fn cpu(vendor: &str, family: u32, model: u32, name: &str) -> CpuId {
        let text = format!(
            "processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: {name}\nstepping\t: 1\n\nprocessor\t: 1\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n\n"
        );
        CpuId::from_cpuinfo(&text).expect("x86 identity")
    }

    fn names_for(cpu: &CpuId) -> Vec<String> {
        let groups = builtin().unwrap();
        let (chosen, notes) = select(&groups, Some(cpu), &GroupSelection::Matching);
        assert!(notes.is_empty());
        let mut n: Vec<String> = chosen.iter().map(|g| g.name.clone()).collect();
        n.sort();
        n
    }

    #[test]
    fn every_family_perfmon_lists_gets_flops_cache_and_memory_groups() {
        let all = ["FLOPS_DP", "FLOPS_SP", "L2", "L3", "MEM"];
        let cases = [
            (
                "GenuineIntel",
                6,
                79,
                "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz",
                "broadwell",
            ),
            (
                "GenuineIntel",
                6,
                63,
                "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz",
                "haswell",
            ),
            (
                "GenuineIntel",
                6,
                94,
                "Intel(R) Core(TM) i7-6700 CPU @ 3.40GHz",
                "skylake",
            ),
            (
                "GenuineIntel",
                6,
                85,
                "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz",
                "skylake_avx512",
            ),
            (
                "GenuineIntel",
                6,
                45,
                "Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz",
                "sandybridge",
            ),
            (
                "AuthenticAMD",
                23,
                1,
                "AMD EPYC 7601 32-Core Processor",
                "zen",
            ),
        ];
        for (vendor, family, model, name, arch) in cases {
            let c = cpu(vendor, family, model, name);
            assert_eq!(micro_architecture(&c), Some(arch), "{name}");
            assert_eq!(names_for(&c), all, "{name}");
        }
        let zen3 = cpu("AuthenticAMD", 25, 1, "AMD EPYC 7763 64-Core Processor");
        assert_eq!(micro_architecture(&zen3), Some("zen3"));
        // Family 19h counts FLOPs by operation, not by precision.
        assert_eq!(names_for(&zen3), ["FLOPS", "L2", "L3", "MEM"]);
    }

    #[test]
    fn each_family_gets_its_own_event_codes() {
        let groups = builtin().unwrap();
        let l3 = |c: &CpuId| -> Vec<group::EventSpec> {
            let (g, _) = select(&groups, Some(c), &GroupSelection::Named(vec!["L3".into()]));
            g[0].events.iter().map(|e| e.spec).collect()
        };
        let raw = |event, umask| group::EventSpec::Raw {
            config: group::x86_raw_config(event, umask),
        };
        let skx = cpu("GenuineIntel", 6, 85, "Xeon Gold");
        assert_eq!(l3(&skx), [raw(0xf1, 0x1f), raw(0xf2, 0x02)]);
        let skl = cpu("GenuineIntel", 6, 94, "Core i7");
        assert_eq!(l3(&skl), [raw(0xf1, 0x07), raw(0xf2, 0x02)]);
        let hsw = cpu("GenuineIntel", 6, 63, "Xeon v3");
        assert_eq!(l3(&hsw), [raw(0xf1, 0x07), raw(0xf0, 0x40)]);
        let snb = cpu("GenuineIntel", 6, 45, "Xeon E5");
        assert_eq!(l3(&snb), [raw(0xf1, 0x07), raw(0xf2, 0x0a)]);
        let zen = cpu("AuthenticAMD", 23, 1, "EPYC");
        assert_eq!(l3(&zen), [raw(0x43, 0x12)]);
        let zen3 = cpu("AuthenticAMD", 25, 1, "EPYC");
        assert_eq!(l3(&zen3), [raw(0x43, 0x16)]);
    }

    #[test]
    fn memory_bandwidth_is_64_bytes_per_missed_line() {
        let groups = builtin().unwrap();
        let c = cpu("GenuineIntel", 6, 79, "Xeon v4");
        let (g, _) = select(
            &groups,
            Some(&c),
            &GroupSelection::Named(vec!["MEM".into()]),
        );
        assert_eq!(
            g[0].events[0].spec,
            group::EventSpec::Raw {
                config: group::x86_raw_config(0x2e, 0x41)
            }
        );
        // 1e6 misses in 2 s: 32 MB/s.
        let m = g[0].evaluate(&|_| Some(1.0e6), 2.0);
        assert_eq!(m[0].1.as_deref(), Some("MBytes/s"));
        assert_eq!(m[0].2, Some(32.0));
    }

    #[test]
    fn an_unknown_processor_gets_no_group_and_a_named_one_a_note() {
        let groups = builtin().unwrap();
        let arm = CpuId {
            vendor: "ARM".into(),
            family: 0,
            model: 0,
        };
        assert!(names_for(&arm).is_empty());
        let (g, notes) = select(
            &groups,
            Some(&arm),
            &GroupSelection::Named(vec!["L2".into()]),
        );
        assert!(g.is_empty());
        assert_eq!(
            notes,
            ["group L2: no group of that name for this processor"]
        );
    }

    #[test]
    fn the_perf_groups_flag_takes_all_none_or_names() {
        assert_eq!(GroupSelection::parse("all"), Ok(GroupSelection::Matching));
        assert_eq!(GroupSelection::parse("none"), Ok(GroupSelection::None));
        assert_eq!(
            GroupSelection::parse("flops_dp, L3,L3"),
            Ok(GroupSelection::Named(vec!["FLOPS_DP".into(), "L3".into()]))
        );
        let e = GroupSelection::parse("L4").unwrap_err();
        assert!(
            e.contains("`L4`") && e.contains("FLOPS_DP, FLOPS_SP, L2, L3, MEM"),
            "{e}"
        );
    }
}
