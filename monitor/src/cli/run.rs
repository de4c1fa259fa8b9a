//! One monitoring run: find the job, sample it until it ends, write the
//! node's files at every checkpoint, then combine every node's data into
//! the per-job files.
//!
//! Under a scheduler the monitor waits for the job's first processes on
//! this node, then asks for them again every 5 s (new steps are followed
//! from then on) and whenever the known ones are gone. The run ends when
//! none are left (processes that are only zombies count as gone), when
//! `.ipc-<jobid>` in the working directory holds `FINISHED`, or on SIGINT
//! or SIGTERM. A job whose steps leave a gap with no process on this node
//! therefore ends the run at the gap, as with perfmon. With `--` the run ends when the command exits, and the
//! monitor exits with the command's status (128 + the signal that killed
//! it); SIGINT and SIGTERM are passed on to the command.

use super::args::{Config, Target};
use super::job::{self, Job, Roots, Scheduler};
use super::log::{unix_now, Log};
use super::record;
use super::signals::{self, Stop, StopReason};
use super::store::{self, NodeStore};
use super::trace::CounterTrace;
use crate::{hardware_metadata, ProcessDetail, Sampler, SamplerConfig, Snapshot};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The exit status of a run whose setup failed.
pub const EXIT_FAILURE: i32 = 1;
/// The exit status of a command line that cannot run.
pub const EXIT_USAGE: i32 = 2;

/// How often the loop looks for a stop (signal, exited command) while it
/// waits for the next sample.
const POLL: Duration = Duration::from_millis(50);
/// Least time between two searches for the job's processes.
const REDISCOVER: Duration = Duration::from_secs(5);

/// Least time between reads of the per-process detail files (`status`,
/// `smaps_rollup`, the `fd` directory).
const DETAIL_INTERVAL: Duration = Duration::from_secs(5);

/// Least time between reads of the `children` files that find the job's
/// new processes.
const TREE_INTERVAL: Duration = Duration::from_secs(1);

/// Least time between reads of the perf counters and of the processes'
/// `io` files: at fast sampling rates they are the costliest reads left
/// (one `read` per counter per task, one `io` file per process), and a
/// second is fine enough for both.
const SLOW_INTERVAL: Duration = Duration::from_secs(1);

/// The name this node goes by: `--host-name`, `PERFFLOW_MONITOR_HOST`, or
/// the host name.
pub fn host_name(config: &Config) -> String {
    if let Some(h) = &config.host_name {
        return h.clone();
    }
    if let Some(h) = std::env::var("PERFFLOW_MONITOR_HOST")
        .ok()
        .filter(|h| !h.trim().is_empty())
    {
        return h;
    }
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let h = String::from_utf8_lossy(&buf[..end]).into_owned();
        if !h.is_empty() {
            return h;
        }
    }
    "localhost".to_string()
}

fn user_name() -> String {
    if let Some(u) = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
    {
        return u;
    }
    // SAFETY: getuid cannot fail; getpwuid returns null or a record that
    // stays valid until the next call, and it is copied out at once (no
    // other thread looks users up).
    unsafe {
        let uid = libc::getuid();
        let pw = libc::getpwuid(uid);
        if !pw.is_null() && !(*pw).pw_name.is_null() {
            return std::ffi::CStr::from_ptr((*pw).pw_name)
                .to_string_lossy()
                .into_owned();
        }
        uid.to_string()
    }
}

/// A child's exit status as a shell reports it: the code, or 128 plus the
/// signal that killed it.
pub fn status_code(s: ExitStatus) -> i32 {
    match (s.code(), s.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        (None, None) => EXIT_FAILURE,
    }
}

/// The job's processes and how to find them again.
struct Followed {
    job: Job,
    child: Option<Child>,
    command: Option<Vec<OsString>>,
    roots: Vec<i32>,
    exit_status: Option<i32>,
    last_error: Option<String>,
}

impl Followed {
    /// The process tree of `pid`, named `local-<pid>`.
    fn local(pid: i32) -> Followed {
        Followed {
            job: Job {
                scheduler: Scheduler::Local,
                id: format!("local-{pid}"),
                own_step: None,
                nodes: Vec::new(),
            },
            child: None,
            command: None,
            roots: vec![pid],
            exit_status: None,
            last_error: None,
        }
    }

    /// Looks for the job's processes again (schedulers only). A failure
    /// is logged when it differs from the previous one.
    fn rediscover(&mut self, roots: &Roots, log: &Log) -> Option<Vec<i32>> {
        if self.job.scheduler == Scheduler::Local {
            return None;
        }
        match job::job_pids(&self.job, roots) {
            Ok(p) => {
                self.last_error = None;
                Some(p)
            }
            Err(e) => {
                if self.last_error.as_ref() != Some(&e) {
                    log.warn(&format!("cannot list the job's processes: {e}"));
                    self.last_error = Some(e);
                }
                None
            }
        }
    }

    /// Whether the command the monitor started has exited (and records
    /// its status).
    fn child_exited(&mut self) -> bool {
        let Some(c) = self.child.as_mut() else {
            return false;
        };
        match c.try_wait() {
            Ok(Some(s)) => {
                self.exit_status = Some(status_code(s));
                self.child = None;
                true
            }
            Ok(None) => false,
            Err(_) => false,
        }
    }
}

fn ipc_finished(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .map(|t| t.trim() == "FINISHED")
        .unwrap_or(false)
}

/// Waits `d`, in slices, for a stop; true if the run must stop.
fn pause(stop: &Stop, followed: &mut Followed, d: Duration) -> bool {
    let end = Instant::now() + d;
    loop {
        let now = Instant::now();
        if now >= end {
            return stop.reason().is_some();
        }
        if stop.wait((end - now).min(POLL)) {
            return true;
        }
        if followed.child_exited() {
            stop.request(StopReason::JobEnded);
            return true;
        }
    }
}

/// Whether there is something to follow: the `--pid` process exists, or
/// the environment names a scheduler job (a command is checked when it
/// starts).
fn check_target(config: &Config) -> Result<(), (i32, String)> {
    match &config.target {
        Target::Command(_) => Ok(()),
        Target::Pid(pid) => {
            if Path::new(&format!("/proc/{pid}")).exists() {
                Ok(())
            } else {
                Err((EXIT_USAGE, format!("--pid: process {pid} does not exist")))
            }
        }
        Target::Scheduler => scheduler_job().map(|_| ()),
    }
}

/// The scheduler job the environment names.
fn scheduler_job() -> Result<job::Job, (i32, String)> {
    let env = |k: &str| std::env::var(k).ok();
    job::detect(&env).ok_or((
        EXIT_USAGE,
        "no job found: none of SLURM_JOB_ID, PBS_JOBID, OAR_JOB_ID or FLUX_JOB_ID \
         is set; use --pid PID or -- COMMAND to follow a process"
            .to_string(),
    ))
}

fn start_target(
    config: &Config,
    child_pid: &AtomicI32,
    log: &Log,
) -> Result<Followed, (i32, String)> {
    match &config.target {
        Target::Command(cmd) => {
            let mut command = Command::new(&cmd[0]);
            command.args(&cmd[1..]);
            // SAFETY: the closure only calls pthread_sigmask, which is
            // async-signal-safe.
            unsafe {
                command.pre_exec(signals::unblock);
            }
            let child = command
                .spawn()
                .map_err(|e| (127, format!("cannot run {}: {e}", cmd[0].to_string_lossy())))?;
            let pid = child.id() as i32;
            child_pid.store(pid, Ordering::SeqCst);
            log.info(&format!("started {:?} as process {pid}", cmd));
            let mut f = Followed::local(pid);
            f.child = Some(child);
            f.command = Some(cmd.clone());
            Ok(f)
        }
        Target::Pid(pid) => {
            check_target(config)?;
            Ok(Followed::local(*pid))
        }
        Target::Scheduler => {
            let job = scheduler_job()?;
            Ok(Followed {
                job,
                child: None,
                command: None,
                roots: Vec::new(),
                exit_status: None,
                last_error: None,
            })
        }
    }
}

/// The job-level metadata every node writes.
fn job_meta(config: &Config, followed: &Followed) -> Value {
    json!({
        "job_id": followed.job.id,
        "scheduler": followed.job.scheduler.name(),
        "name": config.name,
        "system": config.system,
        "partition": config.partition,
        "env": config.env,
        "launcher": config.launcher,
        "user": user_name(),
        "sampling_frequency": config.interval.as_secs_f64(),
        "check_point": config.checkpoint.as_secs_f64(),
        "command": followed.command.as_ref().map(|c| {
            c.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>()
        }),
        "exit_status": followed.exit_status,
        "node_list": followed.job.nodes,
    })
}

/// Everything the loop keeps about the node, for its metadata file.
struct NodeState {
    host: String,
    start: f64,
    end: Option<f64>,
    hardware: Value,
    processes: BTreeSet<String>,
    stop_reason: Option<String>,
    /// The main process whose metadata is `parent_proc_md`.
    parent_pid: Option<i32>,
    parent_proc_md: Value,
    /// `-l`, or the launcher identified from the job's processes.
    launcher: Option<String>,
}

fn node_meta(config: &Config, followed: &Followed, node: &NodeState, sampler: &Sampler) -> Value {
    let mut job = job_meta(config, followed);
    if job["launcher"].is_null() {
        job["launcher"] = json!(node.launcher);
    }
    let accounting = sampler.cpu_accounting().map(|a| match a {
        crate::source::process::CpuAccounting::Cgroup(dir) => {
            json!({"method": a.method(), "cgroup": dir.display().to_string()})
        }
        _ => json!({"method": a.method()}),
    });
    json!({
        "parent_proc_md": node.parent_proc_md,
        "micro_architecture": crate::source::perf::CpuId::read(&sampler.config().proc_root)
            .as_ref()
            .and_then(crate::groups::micro_architecture),
        "launcher": node.launcher,
        "cpu_accounting": accounting,
        "host": node.host,
        "job": job,
        "start_time": node.start,
        "end_time": node.end,
        "monitor_pid": std::process::id(),
        "hardware": node.hardware,
        "unavailable": sampler.unavailable().iter().map(ToString::to_string).collect::<Vec<_>>(),
        "processes": node.processes,
        "stop_reason": node.stop_reason,
    })
}

/// The node's outputs during a run: its data and metadata files and its
/// counter trace.
struct Recorder<'a> {
    config: &'a Config,
    log: &'a Log,
    metrics_dir: PathBuf,
    store: NodeStore,
    trace: Option<CounterTrace>,
    node: NodeState,
    /// Unavailable sources already logged.
    reported: usize,
    /// `.perf_event_list.json` is written.
    perf_list_written: bool,
}

impl<'a> Recorder<'a> {
    fn open(config: &'a Config, log: &'a Log, host: &str, job_id: &str, store: NodeStore) -> Self {
        let out_dir = config.out_dir();
        let metrics_dir = out_dir.join("metrics");
        let about = json!({
            "interval_ms": config.interval.as_secs_f64() * 1e3,
            "job_id": job_id,
            "host": host,
        });
        let trace = CounterTrace::create(&out_dir, host, std::process::id(), &about)
            .map_err(|e| log.warn(&format!("cannot write the counter trace: {e}")))
            .ok();
        Recorder {
            config,
            log,
            metrics_dir,
            store,
            trace,
            node: NodeState {
                host: host.to_string(),
                start: unix_now(),
                end: None,
                hardware: hardware_metadata().to_json_value(),
                processes: BTreeSet::new(),
                stop_reason: None,
                parent_pid: None,
                parent_proc_md: json!({}),
                launcher: config.launcher.clone(),
            },
            reported: 0,
            perf_list_written: false,
        }
    }

    /// Holds one snapshot until the next checkpoint.
    fn record(&mut self, sampler: &Sampler, snapshot: &Snapshot) {
        for u in &sampler.unavailable()[self.reported..] {
            self.log.info(&format!("unavailable: {u}"));
        }
        self.reported = sampler.unavailable().len();
        if let Some(p) = &snapshot.process {
            if self.node.parent_pid != Some(p.root_pid) {
                let proc_root = &sampler.config().proc_root;
                self.node.parent_pid = Some(p.root_pid);
                self.node.parent_proc_md =
                    crate::process_meta::parent_process_metadata(proc_root, p.root_pid);
                if self.config.launcher.is_none() {
                    let found = crate::process_meta::identify_launcher(proc_root, &[p.root_pid]);
                    self.node.launcher = found.map(str::to_string);
                }
            }
            for proc in &p.processes {
                if self.node.processes.len() < MAX_PROCESS_NAMES {
                    self.node
                        .processes
                        .insert(format!("{} ({})", proc.name, proc.pid));
                }
            }
        }
        let rows = record::rows(snapshot, &self.node.host);
        if !self.perf_list_written {
            let secs = self.config.interval.as_secs_f64();
            if let Some(list) = rows
                .iter()
                .find_map(|r| super::dumps::perf_event_list(r, secs))
            {
                self.perf_list_written = true;
                if let Err(e) = super::dumps::write_perf_event_list(&self.config.out_dir(), &list) {
                    self.log
                        .warn(&format!("cannot write the perf event list: {e}"));
                }
            }
        }
        self.store.push(&rows);
        if let Some(t) = self.trace.as_mut() {
            t.push(snapshot);
        }
    }

    /// Writes what is held, and the node's metadata.
    fn checkpoint(&mut self, followed: &Followed, sampler: &Sampler) {
        if let Err(e) = self.store.checkpoint() {
            self.log.warn(&format!("checkpoint failed: {e}"));
        }
        if let Some(Err(e)) = self.trace.as_mut().map(CounterTrace::flush) {
            self.log
                .warn(&format!("cannot write the counter trace: {e}"));
        }
        let meta = node_meta(self.config, followed, &self.node, sampler);
        if let Err(e) = self.store.write_meta(&meta) {
            self.log.warn(&format!("cannot write node metadata: {e}"));
        }
    }

    /// Writes the node's last data, closes the trace and combines every
    /// node's data into the per-job files.
    fn finish(mut self, followed: &Followed, sampler: &Sampler, reason: &StopReason) {
        self.node.end = Some(unix_now());
        self.node.stop_reason = Some(reason.to_string());
        self.checkpoint(followed, sampler);
        if let Some(t) = self.trace.take() {
            let path = t.path().to_path_buf();
            match t.finish() {
                Ok(()) => self.log.info(&format!("counter trace: {}", path.display())),
                Err(e) => self
                    .log
                    .warn(&format!("cannot finish the counter trace: {e}")),
            }
        }
        let out_dir = self.config.out_dir();
        let config = self.config;
        let combined = store::combine_and(&self.metrics_dir, Some(&followed.job.id), |_| {
            super::post::post_process(config, &out_dir)
        });
        match combined {
            Ok((s, post)) => {
                for skipped in &s.skipped {
                    self.log.warn(&skipped.to_string());
                }
                self.log.info(&format!(
                    "combined {} node(s) into {}",
                    s.nodes.len(),
                    self.metrics_dir.display()
                ));
                match post {
                    Ok(notes) => notes.iter().for_each(|n| self.log.info(n)),
                    Err(e) => self.log.warn(&format!("after the run: {e}")),
                }
            }
            Err(e) => self
                .log
                .warn(&format!("cannot combine the node files: {e}")),
        }
    }
}

/// Most process names kept for `child_proc_md`.
const MAX_PROCESS_NAMES: usize = 10_000;

/// Waits until a scheduler's job has processes on this node (it may start
/// after the monitor), or a stop.
fn wait_for_job(followed: &mut Followed, ipc: &Path, stop: &Stop, interval: Duration, log: &Log) {
    if followed.job.scheduler == Scheduler::Local {
        return;
    }
    let roots = Roots::default();
    let mut said = false;
    loop {
        if ipc_finished(ipc) {
            stop.request(StopReason::Finished);
        }
        if stop.reason().is_some() {
            return;
        }
        if let Some(p) = followed.rediscover(&roots, log).filter(|p| !p.is_empty()) {
            followed.roots = p;
            return;
        }
        if !said {
            log.info("waiting for the job's processes to start");
            said = true;
        }
        if pause(stop, followed, interval.min(Duration::from_secs(1))) {
            return;
        }
    }
}

/// Checks every stop condition after a sample, and follows the job's new
/// processes (schedulers are asked again when the known ones are gone, and
/// every [`REDISCOVER`]).
fn check_job(
    followed: &mut Followed,
    sampler: &mut Sampler,
    snapshot: &Snapshot,
    ipc: &Path,
    stop: &Stop,
    last_discovery: &mut Instant,
    log: &Log,
) {
    if followed.child_exited() {
        stop.request(StopReason::JobEnded);
    }
    if ipc_finished(ipc) {
        stop.request(StopReason::Finished);
    }
    // A zombie has finished its work; only its parent's wait is left.
    let gone = snapshot
        .process
        .as_ref()
        .is_none_or(|p| p.processes.iter().all(|q| q.state == 'Z'));
    if followed.job.scheduler == Scheduler::Local {
        if gone && followed.child.is_none() {
            stop.request(StopReason::JobEnded);
        }
        return;
    }
    let now = Instant::now();
    if !gone && now.duration_since(*last_discovery) < REDISCOVER {
        return;
    }
    *last_discovery = now;
    match followed.rediscover(&Roots::default(), log) {
        Some(p) if !p.is_empty() && p != followed.roots => {
            log.info(&format!("following processes {p:?}"));
            followed.roots = p;
            sampler.set_roots(&followed.roots);
        }
        Some(_) if gone => stop.request(StopReason::JobEnded),
        _ => {}
    }
}

/// The one-line progress display (stderr is a terminal).
fn show_progress(host: &str, samples: usize, started: Instant, snapshot: &Snapshot) {
    let cpu = snapshot
        .process
        .as_ref()
        .and_then(|p| p.rates.cpu_percent)
        .map_or(String::from("-"), |c| format!("{c:.0}%"));
    let _ = write!(
        std::io::stderr(),
        "\rperfflow-monitor {host}: {samples} samples, {:.0} s, job cpu {cpu}   ",
        started.elapsed().as_secs_f64()
    );
}

/// Runs the monitor; returns the exit status.
pub fn run(config: &Config) -> i32 {
    // Signals first: every thread started later inherits the mask.
    let stop = Stop::default();
    let child_pid = Arc::new(AtomicI32::new(0));
    if let Err(e) = signals::install(stop.clone(), child_pid.clone()) {
        eprintln!("perfflow-monitor: cannot set up signal handling: {e}");
        return EXIT_FAILURE;
    }
    let host = host_name(config);
    if let Err(e) = super::args::check_host_name("the node name", &host) {
        eprintln!("perfflow-monitor: {e}");
        return EXIT_FAILURE;
    }
    // Nothing to follow is a usage error, found before any file is made.
    if let Err((code, msg)) = check_target(config) {
        eprintln!("perfflow-monitor: {msg}");
        return code;
    }
    let out_dir = config.out_dir();
    let metrics_dir = out_dir.join("metrics");
    if let Err(e) = std::fs::create_dir_all(&metrics_dir) {
        eprintln!(
            "perfflow-monitor: cannot create {}: {e}",
            metrics_dir.display()
        );
        return EXIT_FAILURE;
    }
    // Before anything is started: a node that cannot keep its data (or
    // whose name another monitor here already uses) ends at once.
    let store = match NodeStore::create(&metrics_dir, &host) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("perfflow-monitor: cannot write node data: {e}");
            return EXIT_FAILURE;
        }
    };
    let log = Log::open(
        &out_dir.join(format!("perfflow-monitor.{host}.log")),
        config.verbose,
    );
    log.info(&format!(
        "perfflow-monitor {} on {host}, pid {}, results in {}",
        env!("CARGO_PKG_VERSION"),
        std::process::id(),
        out_dir.display()
    ));
    let mut followed = match start_target(config, &child_pid, &log) {
        Ok(f) => f,
        Err((code, msg)) => {
            log.warn(&msg);
            return code;
        }
    };
    let ipc = PathBuf::from(format!(".ipc-{}", followed.job.id));
    log.info(&format!(
        "job {} ({}); stop file {}",
        followed.job.id,
        followed.job.scheduler.name(),
        ipc.display()
    ));
    wait_for_job(&mut followed, &ipc, &stop, config.interval, &log);
    log.info(&format!("following processes {:?}", followed.roots));

    let first = followed
        .roots
        .first()
        .copied()
        .unwrap_or(std::process::id() as i32);
    let mut sampler = Sampler::new(SamplerConfig {
        root_pid: first,
        process_detail: ProcessDetail {
            // USS, descriptor and thread counts cost about 60 us per
            // process to read: at most every DETAIL_INTERVAL (every sample
            // when sampling is slower).
            detail_interval: config.interval.max(DETAIL_INTERVAL),
            // New processes of the job are found within a second; known
            // ones are read at every sample.
            tree_interval: config.interval.max(TREE_INTERVAL),
            io_interval: config.interval.max(SLOW_INTERVAL),
            ..ProcessDetail::default()
        },
        perf_groups: config.perf_groups.clone(),
        perf_interval: config.interval.max(SLOW_INTERVAL),
        ..SamplerConfig::default()
    });
    sampler.set_roots(&followed.roots);
    let names: Vec<String> = sampler
        .available()
        .iter()
        .map(ToString::to_string)
        .collect();
    log.info(&format!("sources: {}", names.join(", ")));
    if config.verbose {
        let run_config = super::dumps::run_config(config, &host, &followed.job.id, &sampler);
        match super::dumps::write_run_config(&config.out_dir(), &host, &run_config) {
            Ok(p) => log.info(&format!("configuration: {}", p.display())),
            Err(e) => log.warn(&format!("cannot write the configuration: {e}")),
        }
    }
    let mut recorder = Recorder::open(config, &log, &host, &followed.job.id, store);
    recorder.checkpoint(&followed, &sampler);

    let progress = std::io::stderr().is_terminal();
    let started = Instant::now();
    let (mut next, mut last_checkpoint, mut last_discovery) = (started, started, started);
    let mut samples = 0usize;
    while stop.reason().is_none() {
        let snapshot = sampler.sample();
        samples += 1;
        recorder.record(&sampler, &snapshot);
        if progress {
            show_progress(&host, samples, started, &snapshot);
        }
        check_job(
            &mut followed,
            &mut sampler,
            &snapshot,
            &ipc,
            &stop,
            &mut last_discovery,
            &log,
        );
        let now = Instant::now();
        if now.duration_since(last_checkpoint) >= config.checkpoint {
            last_checkpoint = now;
            recorder.checkpoint(&followed, &sampler);
        }
        if stop.reason().is_some() {
            break;
        }
        next += config.interval;
        let now = Instant::now();
        if next <= now {
            next = now + config.interval;
        }
        pause(&stop, &mut followed, next - now);
    }
    if progress {
        let _ = writeln!(std::io::stderr());
    }
    let reason = stop.reason().unwrap_or(StopReason::JobEnded);
    log.info(&format!("stopping: {reason}; {samples} samples"));
    let code = finish_command(&mut followed, &stop, &log, 0);
    recorder.finish(&followed, &sampler, &reason);
    log.info("done");
    code
}

/// For `--`: the command's exit status, once it has exited (waits up to
/// 10 s after a forwarded signal; a command still running after FINISHED
/// is left running). Otherwise `default`.
fn finish_command(followed: &mut Followed, stop: &Stop, log: &Log, default: i32) -> i32 {
    if followed.command.is_none() {
        return default;
    }
    if let Some(mut c) = followed.child.take() {
        let wait_for = match stop.reason() {
            Some(StopReason::Signal(_)) => Duration::from_secs(10),
            _ => Duration::ZERO,
        };
        let end = Instant::now() + wait_for;
        loop {
            match c.try_wait() {
                Ok(Some(s)) => {
                    followed.exit_status = Some(status_code(s));
                    break;
                }
                Ok(None) if Instant::now() < end => std::thread::sleep(POLL),
                _ => {
                    log.info(&format!(
                        "the command (process {}) is still running; it is left running",
                        c.id()
                    ));
                    break;
                }
            }
        }
    }
    match (followed.exit_status, stop.reason()) {
        (Some(s), _) => {
            log.info(&format!("the command exited with status {s}"));
            s
        }
        // Stopped by a signal while the command runs on: end as killed by
        // it, not as a success.
        (None, Some(StopReason::Signal(sig))) => 128 + sig,
        (None, _) => default,
    }
}
