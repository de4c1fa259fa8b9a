//! Event groups shipped with the library (the files under `groups/`) and
//! loading of more from a directory. See [`crate::parse::group`] for the
//! format and `groups/README.md` for the sources of the event codes.

use crate::error::{Error, ParseError};
use crate::parse::group::{self, EventGroup};
use std::path::Path;

const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "FLOPS_DP",
        "groups/zen/FLOPS_DP.txt",
        include_str!("../groups/zen/FLOPS_DP.txt"),
    ),
    (
        "FLOPS_SP",
        "groups/zen/FLOPS_SP.txt",
        include_str!("../groups/zen/FLOPS_SP.txt"),
    ),
    (
        "FLOPS",
        "groups/zen3/FLOPS.txt",
        include_str!("../groups/zen3/FLOPS.txt"),
    ),
    (
        "FLOPS_DP",
        "groups/skylake_sp/FLOPS_DP.txt",
        include_str!("../groups/skylake_sp/FLOPS_DP.txt"),
    ),
    (
        "FLOPS_SP",
        "groups/skylake_sp/FLOPS_SP.txt",
        include_str!("../groups/skylake_sp/FLOPS_SP.txt"),
    ),
];

/// The groups compiled into the library, for every processor family.
pub fn builtin() -> Result<Vec<EventGroup>, ParseError> {
    BUILTIN
        .iter()
        .map(|(name, file, text)| group::parse(name, file, text))
        .collect()
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

    #[test]
    fn only_the_zen3_group_applies_to_a_family_19h_processor() {
        let groups = builtin().unwrap();
        let names: Vec<_> = groups
            .iter()
            .filter(|g| g.matches("AuthenticAMD", 0x19, 0x11))
            .map(|g| g.name.as_str())
            .collect();
        assert_eq!(names, ["FLOPS"]);
    }
}
