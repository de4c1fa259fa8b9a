//! The instance path: which job (and, for nested runs, which chain of jobs)
//! a traced process belongs to.
//!
//! It appears in trace file names when `log-filename-include` lists
//! `instance-path`, so the traces of one job can be told from another's.
//!
//! # Rule
//!
//! A process first computes its own instance id from the variables its
//! workload manager sets, taking the first that applies (a variable set to
//! the empty string counts as unset):
//!
//! 1. `FLUX_JOB_ID`: used as is, whether decimal or an f58 id such as
//!    `ƒeF9QZG3`.
//! 2. `SLURM_JOB_ID`: the hash of `<SLURM_JOB_ID>.<SLURM_STEP_ID>`.
//! 3. `LSB_JOBID` (LSF): the hash of `<LSB_JOBID>.<LS_JOBPID>`.
//! 4. `PBS_JOBID`: the hash of `<PBS_JOBID>`.
//! 5. `OAR_JOB_ID`, or else `OAR_JOBID`: the hash of its value.
//! 6. Otherwise: the hash of `1`.
//!
//! "The hash of" means the first 8 lowercase hexadecimal digits of the
//! SHA-1 of the text. For SLURM and LSF the pair must be complete: a job id
//! without its step id (or job pid) gives the hash of `1`, as when no
//! workload manager is found.
//!
//! If `PERFFLOW_INSTANCE_PATH` is set (non-empty) it was exported by a
//! traced parent process, and the instance path is `<inherited>.<own id>`,
//! where the own id is always computed from this process's variables as
//! above. A child therefore extends its parent's path rather than re-hashing
//! it; a child in the same job as its parent gets the same own id appended
//! (e.g. `356a192b.356a192b`), and a job launched from inside another job
//! records both. The runtime calls [`export`] with the result so that the
//! process's own children inherit it in turn.
//!
//! # Worked example
//!
//! | environment | instance path |
//! |---|---|
//! | nothing | `356a192b` (SHA-1 of `1`) |
//! | `FLUX_JOB_ID=ƒeF9QZG3` | `ƒeF9QZG3` |
//! | `SLURM_JOB_ID=4242`, `SLURM_STEP_ID=0` | `46883e7f` (SHA-1 of `4242.0`) |
//! | `SLURM_JOB_ID=4242`, no step id | `356a192b` |
//! | `LSB_JOBID=1234`, `LS_JOBPID=5678` | `e1f533a4` (SHA-1 of `1234.5678`) |
//! | `PBS_JOBID=812345.server` | `7bef052f` |
//! | `OAR_JOB_ID=777` | `fc7a734d` |
//! | `PERFFLOW_INSTANCE_PATH=46883e7f`, `SLURM_JOB_ID=4242`, `SLURM_STEP_ID=3` | `46883e7f.ed6b84b3` |
//!
//! The tests check every row.

use sha1_smol::Sha1;

/// The variable that carries the instance path to child processes.
pub const ENV_VAR: &str = "PERFFLOW_INSTANCE_PATH";

/// The instance path computed from the variables `env` returns (`None` for
/// an unset variable). Pure: it reads nothing but `env`.
pub fn instance_path_from(env: impl Fn(&str) -> Option<String>) -> String {
    let get = |key: &str| env(key).filter(|value| !value.is_empty());
    let own = own_id(&get);
    match get(ENV_VAR) {
        Some(inherited) => format!("{inherited}.{own}"),
        None => own,
    }
}

/// The instance path of this process, from its real environment. Values
/// that are not UTF-8 are read with invalid bytes replaced by U+FFFD.
pub fn instance_path() -> String {
    instance_path_from(|key| {
        std::env::var_os(key).map(|value| value.to_string_lossy().into_owned())
    })
}

/// The instance path of this process, worked out once and exported for the
/// child processes it starts (see [`export`]) unless tracing is off
/// (`log-enable=False`: the program's environment is then left as it is).
/// The first call is made by a constructor of the runtime library before
/// `main`, while the program has a single thread, so changing the
/// environment races with nothing; later calls return the same value
/// without touching the environment.
pub fn for_this_process() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let path = instance_path();
        if crate::options::Options::from_env().0.log_enable {
            export(&path);
        }
        path
    })
}

/// Runs [`for_this_process`] before `main` (from `.init_array`).
extern "C" fn export_before_main() {
    let _errno = crate::errno::Kept::now();
    let _ = std::panic::catch_unwind(|| crate::buffer::as_cold_path(for_this_process));
}

#[used]
#[link_section = ".init_array"]
static EXPORT_BEFORE_MAIN: extern "C" fn() = export_before_main;

/// Exports `path` as `PERFFLOW_INSTANCE_PATH` for the child processes this
/// process starts.
///
/// Changing the environment is only sound while no other thread reads or
/// writes it, so this must run before the program starts threads: the
/// runtime calls it from its start-up, before `main`. A path containing a
/// NUL byte cannot be stored in the environment and is not exported.
pub fn export(path: &str) {
    if !path.contains('\0') {
        std::env::set_var(ENV_VAR, path);
    }
}

/// This process's own instance id, from its workload manager's variables.
fn own_id(get: &impl Fn(&str) -> Option<String>) -> String {
    if let Some(flux) = get("FLUX_JOB_ID") {
        return flux;
    }
    let key = if let Some(job) = get("SLURM_JOB_ID") {
        pair(job, get("SLURM_STEP_ID"))
    } else if let Some(job) = get("LSB_JOBID") {
        pair(job, get("LS_JOBPID"))
    } else if let Some(job) = get("PBS_JOBID") {
        job
    } else if let Some(job) = get("OAR_JOB_ID").or_else(|| get("OAR_JOBID")) {
        job
    } else {
        "1".to_string()
    };
    short_hash(&key)
}

/// `<job>.<second>`, or `1` when the second half is missing.
fn pair(job: String, second: Option<String>) -> String {
    match second {
        Some(second) => format!("{job}.{second}"),
        None => "1".to_string(),
    }
}

/// The first 8 lowercase hexadecimal digits of the SHA-1 of `text`.
pub fn short_hash(text: &str) -> String {
    let digest = Sha1::from(text).digest().bytes();
    digest[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
