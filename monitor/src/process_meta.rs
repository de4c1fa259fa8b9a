//! What the metadata says about the job's processes: the main process
//! (perfmon's `parent_proc_md`) and the launcher of the parallel tasks
//! (perfmon's `-l/--launcher`, identified when not given).

use crate::parse::stat;
use serde_json::{json, Value};
use std::path::Path;

/// Launchers and the process names that reveal them, in the order they
/// are tried: a name found among the job's roots, their ancestors and
/// their children names the launcher.
const LAUNCHERS: &[(&str, &[&str])] = &[
    // Open MPI (ORTE before 5.0, PRRTE from 5.0) and its daemons.
    (
        "mpirun",
        &["mpirun", "orterun", "orted", "prterun", "prted", "prte"],
    ),
    // MPICH, MVAPICH and Intel MPI run their ranks under Hydra.
    (
        "mpiexec.hydra",
        &["mpiexec.hydra", "hydra_pmi_proxy", "pmi_proxy"],
    ),
    ("mpiexec", &["mpiexec"]),
    ("srun", &["srun", "slurmstepd"]),
    ("flux", &["flux-shell"]),
    ("aprun", &["aprun"]),
    ("jsrun", &["jsrun", "jsmd"]),
    ("pbsdsh", &["pbsdsh", "pbs_tmrsh"]),
    ("oarsh", &["oarsh"]),
];

/// Environment variables that launchers set in their tasks.
const LAUNCHER_ENV: &[(&str, &str)] = &[
    ("OMPI_COMM_WORLD_RANK", "mpirun"),
    ("PMI_RANK", "mpiexec.hydra"),
    ("SLURM_STEP_ID", "srun"),
    ("FLUX_TASK_RANK", "flux"),
    ("ALPS_APP_PE", "aprun"),
    ("JSM_NAMESPACE_RANK", "jsrun"),
];

/// The launcher named by a process name (`comm`, at most 15 bytes, or the
/// base name of `argv[0]`), if it is one.
pub fn launcher_of_name(name: &str) -> Option<&'static str> {
    let base = name.rsplit('/').next().unwrap_or(name);
    LAUNCHERS
        .iter()
        .find(|(_, names)| {
            names
                .iter()
                .any(|n| base == *n || (base.len() == 15 && n.starts_with(base)))
        })
        .map(|(launcher, _)| *launcher)
}

/// The launcher named by a task's environment (`KEY=value` entries).
pub fn launcher_of_environment<'a>(env: impl IntoIterator<Item = &'a str>) -> Option<&'static str> {
    let keys: Vec<&str> = env
        .into_iter()
        .filter_map(|e| e.split_once('=').map(|(k, _)| k))
        .collect();
    LAUNCHER_ENV
        .iter()
        .find(|(k, _)| keys.contains(k))
        .map(|(_, l)| *l)
}

fn name_and_parent(proc_root: &Path, pid: i32) -> Option<(String, i32)> {
    let text = std::fs::read_to_string(proc_root.join(format!("{pid}/stat"))).ok()?;
    let s = stat::parse(&text).ok()?;
    Some((s.comm, s.ppid))
}

fn children(proc_root: &Path, pid: i32) -> Vec<i32> {
    std::fs::read_to_string(proc_root.join(format!("{pid}/task/{pid}/children")))
        .map(|t| {
            t.split_ascii_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Identifies the launcher of the job whose main processes are `roots`:
/// the first launcher name among each root, its children and its
/// ancestors; failing that, the launcher whose variables are in a root's
/// environment. `None` for a job started without a launcher.
pub fn identify_launcher(proc_root: &Path, roots: &[i32]) -> Option<&'static str> {
    for &root in roots {
        let mut names = Vec::new();
        if let Some((name, _)) = name_and_parent(proc_root, root) {
            names.push(name);
        }
        for c in children(proc_root, root) {
            names.extend(name_and_parent(proc_root, c).map(|(n, _)| n));
        }
        let mut cur = root;
        for _ in 0..64 {
            let Some((_, ppid)) = name_and_parent(proc_root, cur) else {
                break;
            };
            if ppid <= 1 {
                break;
            }
            names.extend(name_and_parent(proc_root, ppid).map(|(n, _)| n));
            cur = ppid;
        }
        if let Some(l) = names.iter().find_map(|n| launcher_of_name(n)) {
            return Some(l);
        }
    }
    roots.iter().find_map(|&root| {
        let env = std::fs::read(proc_root.join(format!("{root}/environ"))).ok()?;
        let text = String::from_utf8_lossy(&env);
        launcher_of_environment(text.split('\0'))
    })
}

/// perfmon's `parent_proc_md` for the job's main process: pid, parent,
/// name, command line, start time (Unix seconds) and user id. Fields that
/// cannot be read are left out; a process that has gone gives `{}`.
pub fn parent_process_metadata(proc_root: &Path, pid: i32) -> Value {
    let Ok(text) = std::fs::read_to_string(proc_root.join(format!("{pid}/stat"))) else {
        return json!({});
    };
    let Ok(s) = stat::parse(&text) else {
        return json!({});
    };
    let mut md = serde_json::Map::new();
    md.insert("pid".into(), json!(pid));
    md.insert("ppid".into(), json!(s.ppid));
    md.insert("name".into(), json!(s.comm));
    if let Ok(cmd) = std::fs::read(proc_root.join(format!("{pid}/cmdline"))) {
        let args: Vec<String> = cmd
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        md.insert("cmdline".into(), json!(args));
    }
    let btime = std::fs::read_to_string(proc_root.join("stat"))
        .ok()
        .and_then(|t| crate::parse::proc_stat::parse(&t).ok())
        .and_then(|p| p.btime);
    if let Some(b) = btime {
        let tck = crate::source::clock_ticks_per_second();
        md.insert(
            "create_time".into(),
            json!(b as f64 + s.starttime as f64 / tck),
        );
    }
    // The owner of /proc/<pid> is the process's effective user.
    if let Ok(m) = std::fs::metadata(proc_root.join(pid.to_string())) {
        md.insert("uid".into(), json!(std::os::unix::fs::MetadataExt::uid(&m)));
    }
    Value::Object(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_daemons_and_commands_name_their_launcher() {
        assert_eq!(launcher_of_name("orted"), Some("mpirun"));
        assert_eq!(launcher_of_name("/usr/bin/mpirun"), Some("mpirun"));
        assert_eq!(launcher_of_name("hydra_pmi_proxy"), Some("mpiexec.hydra"));
        // `comm` keeps 15 bytes of a longer name.
        assert_eq!(launcher_of_name("hydra_pmi_prox"), None);
        assert_eq!(launcher_of_name("mpiexec.hydra"), Some("mpiexec.hydra"));
        assert_eq!(launcher_of_name("slurmstepd"), Some("srun"));
        assert_eq!(launcher_of_name("flux-shell"), Some("flux"));
        assert_eq!(launcher_of_name("bash"), None);
    }

    #[test]
    fn a_task_environment_names_its_launcher() {
        let env = ["HOME=/home/u", "OMPI_COMM_WORLD_RANK=3", "PATH=/bin"];
        assert_eq!(launcher_of_environment(env), Some("mpirun"));
        assert_eq!(
            launcher_of_environment(["SLURM_STEP_ID=0", "SLURM_PROCID=1"]),
            Some("srun")
        );
        assert_eq!(launcher_of_environment(["HOME=/"]), None);
    }

    #[test]
    fn this_process_has_parent_metadata_and_no_launcher_by_name() {
        let me = std::process::id() as i32;
        let md = parent_process_metadata(Path::new("/proc"), me);
        assert_eq!(md["pid"], json!(me));
        assert!(md["cmdline"].as_array().is_some_and(|a| !a.is_empty()));
        assert!(md["create_time"].as_f64().is_some_and(|t| t > 1.0e9));
        assert_eq!(
            parent_process_metadata(Path::new("/proc"), i32::MAX),
            json!({})
        );
    }
}
