//! Finding the job: which scheduler, its job id, and the processes of the
//! job on this node.
//!
//! - SLURM (`SLURM_JOB_ID`): `scontrol listpids <jobid>` lists the pids of
//!   every step on this node. The monitor's own step (`SLURM_STEP_ID`) and
//!   the `batch`, `extern` and `interactive` steps are left out: the batch
//!   shell waits for the monitor, so following it would never end. Without
//!   `scontrol`, the same pids are read from the steps' cgroups
//!   (`.../job_<jobid>/step_<n>/**/cgroup.procs` under `/sys/fs/cgroup`).
//! - PBS (`PBS_JOBID`) and OAR (`OAR_JOB_ID`): neither lists pids, so the
//!   job's processes are those of this user whose environment carries the
//!   same job id; the monitor, its ancestors (the batch shell, the launcher
//!   that started it) and its descendants are left out. Node lists come
//!   from `PBS_NODEFILE_LOCAL` (perfmon's workaround for `PBS_NODEFILE`
//!   existing on the first node only), `PBS_NODEFILE` or `OAR_NODEFILE`.
//! - Flux (`FLUX_JOB_ID`): the monitor is a job of the enclosing instance
//!   and the application is another. The job id is the instance's own id
//!   (`flux getattr jobid`, which `.ipc-<jobid>` files are named after in
//!   batch scripts), and the job's processes are those whose environment
//!   has the monitor's `FLUX_URI` and another `FLUX_JOB_ID`, kept to the
//!   running jobs `flux jobs -n -o {id}` lists when `flux` is on the path.
//! - `--pid` and `--`: the job id is `local-<pid>`.
//!
//! Parsers of command output are pure functions, tested on literal text;
//! the functions that run commands or read `/proc` take their roots as
//! arguments so tests can point them elsewhere.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The batch scheduler the job runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// SLURM.
    Slurm,
    /// PBS or Torque.
    Pbs,
    /// OAR.
    Oar,
    /// Flux.
    Flux,
    /// No scheduler: `--pid` or `--`.
    Local,
}

impl Scheduler {
    /// The name written to the metadata.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Slurm => "slurm",
            Scheduler::Pbs => "pbs",
            Scheduler::Oar => "oar",
            Scheduler::Flux => "flux",
            Scheduler::Local => "local",
        }
    }
}

/// A job found in the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The scheduler.
    pub scheduler: Scheduler,
    /// The job id used in file names and the metadata.
    pub id: String,
    /// The monitor's own step or job, left out of the job's processes
    /// (SLURM step id, Flux job id).
    pub own_step: Option<String>,
    /// The node list, where the scheduler gives one in a file.
    pub nodes: Vec<String>,
}

/// Where to look for things, so tests can use stand-ins.
#[derive(Debug, Clone)]
pub struct Roots {
    /// Where procfs is mounted.
    pub proc_root: PathBuf,
    /// Where the cgroup hierarchy is mounted.
    pub cgroup_root: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            proc_root: PathBuf::from("/proc"),
            cgroup_root: PathBuf::from("/sys/fs/cgroup"),
        }
    }
}

/// The job of the scheduler whose variables `env` holds, or `None`.
pub fn detect(env: &dyn Fn(&str) -> Option<String>) -> Option<Job> {
    let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(id) = get("SLURM_JOB_ID").or_else(|| get("SLURM_JOBID")) {
        return Some(Job {
            scheduler: Scheduler::Slurm,
            id,
            own_step: get("SLURM_STEP_ID").or_else(|| get("SLURM_STEPID")),
            nodes: Vec::new(),
        });
    }
    if let Some(id) = get("PBS_JOBID") {
        let file = get("PBS_NODEFILE_LOCAL").or_else(|| get("PBS_NODEFILE"));
        return Some(Job {
            scheduler: Scheduler::Pbs,
            id,
            own_step: None,
            nodes: file
                .map(|f| read_nodefile(Path::new(&f)))
                .unwrap_or_default(),
        });
    }
    if let Some(id) = get("OAR_JOB_ID").or_else(|| get("OAR_JOBID")) {
        let file = get("OAR_NODEFILE").or_else(|| get("OAR_NODE_FILE"));
        return Some(Job {
            scheduler: Scheduler::Oar,
            id,
            own_step: None,
            nodes: file
                .map(|f| read_nodefile(Path::new(&f)))
                .unwrap_or_default(),
        });
    }
    if let Some(own) = get("FLUX_JOB_ID") {
        let id = run_command("flux", &["getattr", "jobid"])
            .ok()
            .map(|o| o.trim().to_string())
            .filter(|s| !s.is_empty() && !s.contains(char::is_whitespace))
            .unwrap_or_else(|| own.clone());
        return Some(Job {
            scheduler: Scheduler::Flux,
            id,
            own_step: Some(own),
            nodes: Vec::new(),
        });
    }
    None
}

/// The distinct host names of a node file (one per line, repeated once
/// per slot), in file order.
pub fn parse_nodefile(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|h| seen.insert(h.to_string()))
        .map(str::to_string)
        .collect()
}

fn read_nodefile(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| parse_nodefile(&t))
        .unwrap_or_default()
}

/// One row of `scontrol listpids`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPid {
    /// Process id.
    pub pid: i32,
    /// Job id.
    pub job: String,
    /// Step id (a number, `batch`, `extern`...).
    pub step: String,
}

/// Parses `scontrol listpids` output: a header `PID JOBID STEPID LOCALID
/// GLOBALID`, then one row per process. Rows that do not start with a pid
/// are skipped.
pub fn parse_listpids(text: &str) -> Vec<ListedPid> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pid = f.next()?.parse::<i32>().ok().filter(|&p| p > 0)?;
            let job = f.next()?.to_string();
            let step = f.next()?.to_string();
            Some(ListedPid { pid, job, step })
        })
        .collect()
}

/// Whether a SLURM step holds the job's work: a numbered step other than
/// the monitor's own.
fn is_work_step(step: &str, own_step: Option<&str>) -> bool {
    step.parse::<u64>().is_ok() && Some(step) != own_step
}

/// How long a scheduler command may take before it is killed: a hung
/// `scontrol` or `flux` must not hang the monitor.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs a command and returns its standard output; a command still running
/// after [`COMMAND_TIMEOUT`] is killed and counts as failed.
pub fn run_command(program: &str, args: &[&str]) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    // Read the output on a thread, so a full pipe cannot stall the command.
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(out) = stdout.as_mut() {
            let _ = std::io::Read::read_to_end(out, &mut buf);
        }
        buf
    });
    let deadline = std::time::Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                // Not joined: a process the command started may still hold
                // the pipe open.
                drop(reader);
                return Err(format!(
                    "{program} {} did not answer within {} s; killed",
                    args.join(" "),
                    COMMAND_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for {program}: {e}")),
        }
    };
    let out = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("{program} {} failed ({status})", args.join(" ")));
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The processes of `job` on this node, without the monitor, its
/// ancestors and its descendants, sorted. How they are found depends on
/// the scheduler (see the module documentation).
pub fn job_pids(job: &Job, roots: &Roots) -> Result<Vec<i32>, String> {
    let me = std::process::id() as i32;
    let mut pids = match job.scheduler {
        Scheduler::Slurm => slurm_pids(job, roots)?,
        Scheduler::Pbs => env_pids(&roots.proc_root, |env| {
            environ_var(env, "PBS_JOBID") == Some(job.id.as_str())
        }),
        Scheduler::Oar => env_pids(&roots.proc_root, |env| {
            let id = environ_var(env, "OAR_JOB_ID").or_else(|| environ_var(env, "OAR_JOBID"));
            id == Some(job.id.as_str())
        }),
        Scheduler::Flux => flux_pids(job, &roots.proc_root),
        Scheduler::Local => Vec::new(),
    };
    let ancestors = ancestors_of(&roots.proc_root, me);
    pids.retain(|p| *p != me && !ancestors.contains(p));
    let mut kept = Vec::with_capacity(pids.len());
    for p in pids {
        if !ancestors_of(&roots.proc_root, p).contains(&me) {
            kept.push(p);
        }
    }
    kept.sort_unstable();
    kept.dedup();
    Ok(kept)
}

fn slurm_pids(job: &Job, roots: &Roots) -> Result<Vec<i32>, String> {
    let own = job.own_step.as_deref();
    match run_command("scontrol", &["listpids", &job.id]) {
        Ok(text) => Ok(parse_listpids(&text)
            .into_iter()
            .filter(|r| is_work_step(&r.step, own))
            .map(|r| r.pid)
            .collect()),
        Err(e) => {
            let from_cgroups = cgroup_pids(&roots.cgroup_root, &job.id, own);
            if from_cgroups.is_empty() && !cgroup_job_dirs(&roots.cgroup_root, &job.id).is_empty() {
                return Ok(Vec::new());
            }
            if from_cgroups.is_empty() {
                return Err(format!(
                    "{e}, and no cgroup job_{} under {}",
                    job.id,
                    roots.cgroup_root.display()
                ));
            }
            Ok(from_cgroups)
        }
    }
}

/// Directories named `job_<id>` under `root`, searched a few levels deep
/// (cgroup v2 puts them under `system.slice/slurmstepd.scope/`, v1 under
/// `<controller>/slurm/uid_<uid>/`).
fn cgroup_job_dirs(root: &Path, job_id: &str) -> Vec<PathBuf> {
    let want = format!("job_{job_id}");
    let mut found = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            if !e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                continue;
            }
            let name = e.file_name();
            if name.to_str() == Some(want.as_str()) {
                found.push(e.path());
            } else if depth < 4 {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    found
}

/// The pids in the `cgroup.procs` files of the job's numbered steps other
/// than `own_step`.
pub fn cgroup_pids(root: &Path, job_id: &str, own_step: Option<&str>) -> Vec<i32> {
    let mut pids = Vec::new();
    for job_dir in cgroup_job_dirs(root, job_id) {
        let Ok(rd) = std::fs::read_dir(&job_dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let Some(step) = name.to_str().and_then(|n| n.strip_prefix("step_")) else {
                continue;
            };
            if is_work_step(step, own_step) {
                collect_procs(&e.path(), &mut pids);
            }
        }
    }
    pids
}

fn collect_procs(dir: &Path, out: &mut Vec<i32>) {
    if let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) {
        out.extend(
            text.split_whitespace()
                .filter_map(|t| t.parse::<i32>().ok()),
        );
    }
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                collect_procs(&e.path(), out);
            }
        }
    }
}

/// The value of `name` in a `/proc/<pid>/environ` block (NUL-separated
/// `NAME=value` entries).
pub fn environ_var<'a>(environ: &'a [u8], name: &str) -> Option<&'a str> {
    environ.split(|&b| b == 0).find_map(|entry| {
        let rest = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        std::str::from_utf8(rest).ok()
    })
}

/// Processes whose environment `keep` accepts (those whose environment
/// cannot be read, other users' processes, are skipped).
fn env_pids(proc_root: &Path, keep: impl Fn(&[u8]) -> bool) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(proc_root) else {
        return out;
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            if keep(&env) {
                out.push(pid);
            }
        }
    }
    out
}

fn flux_pids(job: &Job, proc_root: &Path) -> Vec<i32> {
    let uri = std::env::var("FLUX_URI").ok();
    let own = job.own_step.clone();
    let running: Option<HashSet<String>> = run_command("flux", &["jobs", "-n", "-o", "{id}"])
        .ok()
        .map(|t| t.split_whitespace().map(str::to_string).collect());
    env_pids(proc_root, |env| {
        let Some(id) = environ_var(env, "FLUX_JOB_ID") else {
            return false;
        };
        if Some(id) == own.as_deref() {
            return false;
        }
        if uri.is_some() && environ_var(env, "FLUX_URI") != uri.as_deref() {
            return false;
        }
        running.as_ref().is_none_or(|r| r.contains(id))
    })
}

/// The parent chain of `pid` (its parent, grandparent... up to pid 1).
pub fn ancestors_of(proc_root: &Path, pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut cur = pid;
    while cur > 1 && out.len() < 256 {
        let Ok(text) = std::fs::read_to_string(proc_root.join(format!("{cur}/stat"))) else {
            break;
        };
        let Ok(st) = crate::parse::stat::parse(&text) else {
            break;
        };
        if st.ppid <= 0 {
            break;
        }
        out.push(st.ppid);
        cur = st.ppid;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listpids_rows_are_parsed_and_the_header_skipped() {
        let text = "PID      JOBID    STEPID   LOCALID GLOBALID\n\
                    1234     77       0        0       0\n\
                    1240     77       batch    -       -\n";
        let rows = parse_listpids(text);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].pid, 1234);
        assert_eq!(rows[1].step, "batch");
    }

    #[test]
    fn a_nodefile_gives_each_host_once_in_order() {
        assert_eq!(parse_nodefile("b\nb\na\n\nb\n"), vec!["b", "a"]);
    }

    #[test]
    fn environ_values_are_found_by_exact_name() {
        let env = b"PBS_JOBID_X=1\0PBS_JOBID=42.srv\0";
        assert_eq!(environ_var(env, "PBS_JOBID"), Some("42.srv"));
        assert_eq!(environ_var(env, "OAR_JOB_ID"), None);
    }
}
