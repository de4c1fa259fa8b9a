//! Helpers shared by the end-to-end tests: building the C and C++ programs
//! under `tests/c/` against the runtime library of this test run, running
//! them in scratch directories with a controlled environment, and reading
//! and checking the traces they leave.
//!
//! Timestamps are compared as exact integer nanoseconds read from the trace
//! text: a `ts` around 1.7e15 µs does not fit an `f64` to the nanosecond.

#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Variables that change what the runtime does. They are removed from every
/// program's environment, so a test sets exactly what it means to test.
pub const RUNTIME_VARIABLES: [&str; 11] = [
    "PERFFLOW_OPTIONS",
    "PERFFLOW_INSTANCE_PATH",
    "PERFFLOW_FLOW_PREFIX",
    "FLUX_JOB_ID",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "LSB_JOBID",
    "LS_JOBPID",
    "PBS_JOBID",
    "OAR_JOB_ID",
    "OAR_JOBID",
];

// --- building -------------------------------------------------------------

/// Directory holding the runtime libraries built for this test run: next to
/// the test binary (`target/<profile>/deps/`), or one level up after a plain
/// `cargo build`; the newer copy wins.
pub fn lib_dir(file: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps directory").to_path_buf();
    let candidates = [
        deps.clone(),
        deps.parent().expect("profile dir").to_path_buf(),
    ];
    candidates
        .iter()
        .filter(|d| d.join(file).is_file())
        .max_by_key(|d| fs::metadata(d.join(file)).and_then(|m| m.modified()).ok())
        .cloned()
        .unwrap_or_else(|| panic!("{file} not found next to {}", exe.display()))
}

pub fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c")
}

pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// The program `tests/c/<name>.c` (or `.cpp`), linked statically against
/// the runtime. Built once per test binary, then shared by its tests.
pub fn program(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(HashMap::new()));
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(bin) = built.get(name) {
        return bin.clone();
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("perfflow-e2e")
        .join(env!("CARGO_CRATE_NAME"));
    fs::create_dir_all(&dir).expect("create build dir");
    let bin = dir.join(name);
    compile(name, &bin);
    built.insert(name.to_string(), bin.clone());
    bin
}

fn compile(name: &str, out: &Path) {
    compile_with(name, out, &[], &[]);
}

/// Builds `tests/c/<name>.c` (or `.cpp`) into `out` as [`program`] does,
/// with `cflags` before the source and `libs` after the runtime library
/// (say, what `python3-config --embed` prints).
pub fn compile_with(name: &str, out: &Path, cflags: &[String], libs: &[String]) {
    let cxx = source_dir().join(format!("{name}.cpp")).is_file();
    let source = source_dir().join(format!("{name}.{}", if cxx { "cpp" } else { "c" }));
    let partial = out.with_extension(format!("partial-{}", std::process::id()));
    let mut cmd = Command::new(if cxx { "c++" } else { "cc" });
    cmd.args(["-O1", "-g", "-Wall", "-Werror", "-I"])
        .arg(include_dir())
        .arg("-I")
        .arg(source_dir())
        .args(cflags)
        .arg(&source)
        .arg("-o")
        .arg(&partial)
        .arg(lib_dir("libperfflow_runtime.a").join("libperfflow_runtime.a"))
        .args(libs);
    if cxx {
        cmd.arg("-lstdc++");
    }
    // No debug info in the linked program: the runtime's static library
    // carries the line tables of everything it holds, over 100 MB a program.
    cmd.args(["-lpthread", "-ldl", "-lm", "-Wl,--strip-debug"]);
    let result = cmd.output().expect("run the C compiler");
    assert!(
        result.status.success(),
        "compiling {} failed:\n{}",
        source.display(),
        String::from_utf8_lossy(&result.stderr)
    );
    fs::rename(&partial, out).expect("move the program in place");
}

// --- running --------------------------------------------------------------

/// A fresh directory for one test, removed when the test passes (kept for a
/// look when it fails).
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(test: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!(
            "perfflow-e2e-{}-{test}-{}",
            env!("CARGO_CRATE_NAME"),
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("create scratch dir");
        Scratch { path }
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// A command for `bin` running in `dir`, with every variable the runtime
/// reads removed from its environment.
pub fn command(bin: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(dir);
    for var in RUNTIME_VARIABLES {
        cmd.env_remove(var);
    }
    cmd
}

/// What a program that ran to its end left behind.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn from_output(output: Output) -> Finished {
        Finished {
            status: output.status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Value of a `key=value` word printed by the program.
    pub fn printed(&self, key: &str) -> Option<String> {
        printed(&self.stdout, key)
    }

    /// The pid the program printed (`pid=...`).
    pub fn pid(&self) -> u32 {
        self.printed("pid")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no pid printed; stdout: {}", self.stdout))
    }

    /// The host name the program printed (`host=...`).
    pub fn host(&self) -> String {
        self.printed("host")
            .unwrap_or_else(|| panic!("no host printed; stdout: {}", self.stdout))
    }

    /// The signal that ended the program, if one did.
    pub fn signal(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        self.status.signal()
    }
}

pub fn printed(stdout: &str, key: &str) -> Option<String> {
    let prefix = format!("{key}=");
    stdout.lines().find_map(|l| {
        l.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&prefix).map(str::to_string))
    })
}

/// How long a program may run before the test gives up on it.
pub const RUN_LIMIT: Duration = Duration::from_secs(30);

/// Runs `cmd` to its end; a program still running after [`RUN_LIMIT`] is
/// killed and the test fails.
pub fn run(cmd: &mut Command) -> Finished {
    spawn(cmd).wait(RUN_LIMIT)
}

/// A program that has printed `ready` and is still running.
pub struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    stdout: String,
    stderr: std::thread::JoinHandle<String>,
}

/// Starts `cmd` with its output captured.
pub fn spawn(cmd: &mut Command) -> Running {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start test program");
    let out = child.stdout.take().expect("stdout pipe");
    let mut err = child.stderr.take().expect("stderr pipe");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    Running {
        child,
        lines,
        stdout: String::new(),
        stderr,
    }
}

/// Starts `cmd` and waits (at most 60 s) until it prints a line `ready`.
pub fn start_until_ready(cmd: &mut Command) -> Running {
    let mut running = spawn(cmd);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match running.lines.recv_timeout(left) {
            Ok(line) => {
                let ready = line == "ready";
                running.stdout.push_str(&line);
                running.stdout.push('\n');
                if ready {
                    return running;
                }
            }
            Err(_) => {
                let _ = running.child.kill();
                let done = running.finish();
                panic!(
                    "the program never printed ready ({}); stdout: {}\nstderr: {}",
                    done.status, done.stdout, done.stderr
                );
            }
        }
    }
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Value of a `key=value` word printed so far.
    pub fn printed(&self, key: &str) -> Option<String> {
        printed(&self.stdout, key)
    }

    /// Sends `sig` to the program (to its process only, not its group).
    pub fn send(&self, sig: libc::c_int) {
        // SAFETY: kill() with a pid this test started and has not reaped.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0, "kill({}, {sig})", self.child.id());
    }

    /// Waits (at most `limit`) for the program to end; a program still
    /// running then is killed and the test fails.
    pub fn wait(mut self, limit: Duration) -> Finished {
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait().expect("wait for test program") {
                Some(_) => return self.finish(),
                None if Instant::now() >= deadline => {
                    let threads = thread_states(self.child.id());
                    let _ = self.child.kill();
                    let done = self.finish();
                    panic!(
                        "the program was still running after {limit:?} (killed now); \
                         its threads then: {threads}\nstdout: {}\nstderr: {}",
                        done.stdout, done.stderr
                    );
                }
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    fn finish(mut self) -> Finished {
        let status = self.child.wait().expect("reap test program");
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(10)) {
            self.stdout.push_str(&line);
            self.stdout.push('\n');
        }
        let stderr = self.stderr.join().unwrap_or_default();
        Finished {
            status,
            stdout: self.stdout,
            stderr,
        }
    }
}

/// `name (state)` of each thread of process `pid`, from `/proc`.
fn thread_states(pid: u32) -> String {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return "unknown".to_string();
    };
    let mut states: Vec<String> = tasks
        .filter_map(Result::ok)
        .filter_map(|task| fs::read_to_string(task.path().join("stat")).ok())
        .map(|stat| {
            // `tid (comm) state ...`; comm may hold spaces.
            let comm_end = stat.rfind(')').unwrap_or(0);
            let comm = stat
                .split_once('(')
                .map_or("", |(_, r)| &r[..r.rfind(')').unwrap_or(0)]);
            let state = stat[comm_end + 1..]
                .split_whitespace()
                .next()
                .unwrap_or("?");
            format!("{comm} ({state})")
        })
        .collect();
    states.sort();
    states.join(", ")
}

/// Every `.pfw` file in `dir` and below, sorted.
pub fn pfw_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).expect("read dir").filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|x| x == "pfw") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The file name of each `.pfw` file directly in `dir`, sorted.
pub fn pfw_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pfw"))
        .collect();
    names.sort();
    names
}

// --- reading traces -------------------------------------------------------

/// A `ts` or `dur` value (microseconds, up to three decimals) as exact
/// nanoseconds.
pub fn micros_text_to_ns(text: &str) -> u64 {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    assert!(
        !whole.is_empty()
            && whole.bytes().all(|b| b.is_ascii_digit())
            && frac.len() <= 3
            && frac.bytes().all(|b| b.is_ascii_digit()),
        "not a microsecond value with at most three decimals: {text}"
    );
    let mut ns: u64 = whole.parse::<u64>().expect("whole microseconds") * 1000;
    let mut scale = 100;
    for b in frac.bytes() {
        ns += u64::from(b - b'0') * scale;
        scale /= 10;
    }
    ns
}

/// The number text of member `key` in one trace line, if present.
pub fn number_text<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let pattern = format!(",\"{key}\":");
    let at = line.find(&pattern)? + pattern.len();
    let len = line[at..]
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(line.len() - at);
    Some(&line[at..at + len])
}

/// One element of a trace's event array.
#[derive(Debug, Clone)]
pub struct Event {
    pub value: Value,
    /// `ts` in nanoseconds, read exactly from the trace text.
    pub ts_ns: Option<u64>,
    /// `dur` in nanoseconds, read exactly from the trace text.
    pub dur_ns: Option<u64>,
    /// The line of the file the event is on.
    pub line: String,
}

impl Event {
    pub fn name(&self) -> &str {
        self.value["name"].as_str().unwrap_or_default()
    }

    pub fn ph(&self) -> &str {
        self.value["ph"].as_str().unwrap_or_default()
    }

    pub fn tid(&self) -> u64 {
        self.value["tid"].as_u64().expect("tid")
    }

    pub fn pid(&self) -> u64 {
        self.value["pid"].as_u64().expect("pid")
    }

    pub fn ts(&self) -> u64 {
        self.ts_ns
            .unwrap_or_else(|| panic!("event without ts: {}", self.line))
    }

    /// End of an `X` event: `ts + dur`.
    pub fn end(&self) -> u64 {
        self.ts()
            + self
                .dur_ns
                .unwrap_or_else(|| panic!("event without dur: {}", self.line))
    }

    pub fn is_metadata(&self) -> bool {
        self.ph() == "M"
    }
}

/// A trace file read whole and parsed by `serde_json`.
pub struct Trace {
    pub path: PathBuf,
    pub len: usize,
    /// For the object layout: the top-level object without `traceEvents`.
    pub header: Option<serde_json::Map<String, Value>>,
    /// Top-level member names of the object layout, in file order.
    pub top_level_keys: Vec<String>,
    /// Every element of the event array, in file order.
    pub events: Vec<Event>,
}

impl Trace {
    /// Reads and parses `path`; fails the test unless the whole file is one
    /// JSON document: an array of events, or an object with `traceEvents`.
    /// Also checks that each event sits on a line of its own.
    pub fn read(path: &Path) -> Trace {
        let text = fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "{} is not one complete JSON document: {e}\nlast 300 bytes: {:?}",
                path.display(),
                &text[text.len().saturating_sub(300)..]
            )
        });
        let (array, header, top_level_keys) = match doc {
            Value::Array(array) => (array, None, Vec::new()),
            Value::Object(mut object) => {
                let keys = top_level_keys_in_order(&text);
                let array = match object.remove("traceEvents") {
                    Some(Value::Array(array)) => array,
                    other => panic!("traceEvents is not an array: {other:?}"),
                };
                (array, Some(object), keys)
            }
            other => panic!("a trace is an array or an object, not {other}"),
        };
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("{\"name\":"))
            .collect();
        assert_eq!(
            lines.len(),
            array.len(),
            "{}: one event per line",
            path.display()
        );
        let events = array
            .into_iter()
            .zip(lines)
            .map(|(value, line)| event_from(value, line))
            .collect();
        Trace {
            path: path.to_path_buf(),
            len: text.len(),
            header,
            top_level_keys,
            events,
        }
    }

    /// The events that are not metadata.
    pub fn body(&self) -> Vec<&Event> {
        self.events.iter().filter(|e| !e.is_metadata()).collect()
    }

    /// The non-metadata events named `name`.
    pub fn named(&self, name: &str) -> Vec<&Event> {
        self.events
            .iter()
            .filter(|e| !e.is_metadata() && e.name() == name)
            .collect()
    }

    /// `(name, ph)` of the non-metadata events on thread `tid`, in order.
    pub fn phases_on(&self, tid: u64) -> Vec<(String, String)> {
        self.body()
            .into_iter()
            .filter(|e| e.tid() == tid)
            .map(|e| (e.name().to_string(), e.ph().to_string()))
            .collect()
    }

    /// The thread ids with non-metadata events.
    pub fn tids(&self) -> Vec<u64> {
        let mut tids: Vec<u64> = self.body().iter().map(|e| e.tid()).collect();
        tids.sort_unstable();
        tids.dedup();
        tids
    }

    /// The checks every complete trace of process `pid` passes:
    ///
    /// * every event has a string `name` and `ph` and integer `pid` (equal
    ///   to `pid`) and `tid`; every non-metadata event has a `ts`;
    /// * `X` events have a `dur` of at least zero;
    /// * on each thread, `B`, `E` and instant events never go back in time,
    ///   every `E` ends the innermost open `B` (same name), and no `B` is
    ///   left open;
    /// * the last event, and the only one of its name, is the
    ///   `perfflow_runtime` metadata record, whose `events_written` equals
    ///   the number of non-metadata events in the file.
    pub fn assert_complete(&self, pid: u32) {
        self.assert_fields(pid);
        let stacks = self.assert_stack_order();
        for (tid, open) in &stacks {
            assert!(
                open.is_empty(),
                "{}: slices left open on tid {tid}: {open:?}",
                self.path.display()
            );
        }
        let summary = self.summary();
        let written = summary["events_written"]
            .as_u64()
            .expect("events_written is an integer");
        assert_eq!(
            written,
            self.body().len() as u64,
            "{}: events_written against the events in the file",
            self.path.display()
        );
        assert!(
            summary["events_dropped"].is_u64(),
            "events_dropped: {summary}"
        );
        let bytes = summary["bytes_written"]
            .as_u64()
            .expect("bytes_written is an integer");
        assert!(
            bytes > 0 && bytes <= self.len as u64,
            "bytes_written {bytes} for a file of {} bytes",
            self.len
        );
    }

    /// The `args` of the closing `perfflow_runtime` record.
    pub fn summary(&self) -> &Value {
        let last = self.events.last().expect("a trace with events");
        assert_eq!(
            (last.name(), last.ph()),
            ("perfflow_runtime", "M"),
            "{}: the last event is the runtime summary; got {}",
            self.path.display(),
            last.line
        );
        let count = self
            .events
            .iter()
            .filter(|e| e.name() == "perfflow_runtime")
            .count();
        assert_eq!(count, 1, "one runtime summary");
        &last.value["args"]
    }

    pub fn assert_fields(&self, pid: u32) {
        for e in &self.events {
            let v = &e.value;
            assert!(v["name"].is_string(), "name: {}", e.line);
            assert!(v["ph"].is_string(), "ph: {}", e.line);
            assert_eq!(v["pid"].as_u64(), Some(u64::from(pid)), "pid: {}", e.line);
            assert!(v["tid"].is_u64(), "tid: {}", e.line);
            if !e.is_metadata() {
                assert!(e.ts_ns.is_some(), "ts: {}", e.line);
            }
            if e.ph() == "X" {
                let dur = v["dur"].as_f64().expect("X event with a dur");
                assert!(dur >= 0.0 && e.dur_ns.is_some(), "dur: {}", e.line);
            }
        }
    }

    /// Checks per thread that `B`, `E` and instant events never go back in
    /// time and that every `E` ends the innermost open `B`; returns the
    /// slices still open per thread (a prefix of a trace may have some).
    pub fn assert_stack_order(&self) -> HashMap<u64, Vec<String>> {
        assert_stack_order(self.events.iter())
    }
}

/// See [`Trace::assert_stack_order`].
pub fn assert_stack_order<'a>(
    events: impl Iterator<Item = &'a Event>,
) -> HashMap<u64, Vec<String>> {
    let mut stacks: HashMap<u64, Vec<String>> = HashMap::new();
    let mut last_ts: HashMap<u64, u64> = HashMap::new();
    for e in events {
        let ph = e.ph();
        if ph == "M" || ph == "X" {
            continue;
        }
        let tid = e.tid();
        let ts = e.ts();
        let prev = last_ts.insert(tid, ts).unwrap_or(ts);
        assert!(ts >= prev, "time went back on tid {tid}: {}", e.line);
        let stack = stacks.entry(tid).or_default();
        match ph {
            "B" => stack.push(e.name().to_string()),
            "E" => {
                let top = stack.pop();
                assert_eq!(
                    top.as_deref(),
                    Some(e.name()),
                    "an E that does not end the innermost open B on tid {tid}: {}",
                    e.line
                );
            }
            _ => {}
        }
    }
    stacks
}

/// An [`Event`] from its parsed value and the text of its line.
pub fn event_from(value: Value, line: &str) -> Event {
    let line = line.strip_suffix(',').unwrap_or(line);
    let exact = |key: &str| {
        let text = number_text(line, key)?;
        let ns = micros_text_to_ns(text);
        let parsed = value[key].as_f64().expect("a number");
        assert!(
            (ns as f64 / 1000.0 - parsed).abs() <= 1.0,
            "{key} {text} read as {parsed}"
        );
        Some(ns)
    };
    let ts_ns = if value.get("ts").is_some() {
        exact("ts")
    } else {
        None
    };
    let dur_ns = if value.get("dur").is_some() {
        exact("dur")
    } else {
        None
    };
    Event {
        ts_ns,
        dur_ns,
        line: line.to_string(),
        value,
    }
}

/// Names of the top-level members of an object trace, in file order (the
/// parsed map does not keep the order). Only the first line, which holds
/// every member up to `"traceEvents":[`, is looked at.
fn top_level_keys_in_order(text: &str) -> Vec<String> {
    let header = text.lines().next().unwrap_or_default();
    let mut keys = Vec::new();
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = None;
    for (i, c) in header.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                if depth == 1 {
                    if let Some(s) = start.take() {
                        if header[i + 1..].starts_with(':') {
                            keys.push(header[s..i].to_string());
                        }
                    }
                }
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                start = Some(i + 1);
            }
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    keys
}

// --- reading very long traces ---------------------------------------------

/// The parts of one event line that the checks of long traces use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineEvent<'a> {
    pub name: Cow<'a, str>,
    pub ph: Cow<'a, str>,
    pub pid: u64,
    pub tid: u64,
    /// `None` for metadata.
    pub ts_ns: Option<u64>,
    /// `dur` of `X` events.
    pub dur_ns: Option<u64>,
}

/// Reads one event line (without its trailing comma).
///
/// Parsing millions of lines into `serde_json::Value`s takes far longer
/// than the program that wrote them, so the common shape
/// `{"name":"N","cat":"C","pid":P,"tid":T,"ts":U,"ph":"B"}` (plain names,
/// `ph` of one letter, optionally followed by `"dur":D`) is matched exactly
/// by hand: a line of that shape is
/// valid JSON by construction. Any other line, and every line for which
/// `full` is true, goes through `serde_json`; for those the two readings
/// must agree.
pub fn read_event_line(line: &str, full: bool) -> LineEvent<'_> {
    let quick = match quick_event_line(line) {
        Some(quick) if !full => return quick,
        quick => quick,
    };
    let value: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not one JSON event ({e}): {line}"));
    assert!(value.is_object(), "not an object: {line}");
    let parsed = LineEvent {
        name: Cow::Owned(value["name"].as_str().expect("name").to_string()),
        ph: Cow::Owned(value["ph"].as_str().expect("ph").to_string()),
        pid: value["pid"].as_u64().expect("pid"),
        tid: value["tid"].as_u64().expect("tid"),
        ts_ns: value
            .get("ts")
            .map(|_| micros_text_to_ns(number_text(line, "ts").expect("ts"))),
        dur_ns: value
            .get("dur")
            .map(|_| micros_text_to_ns(number_text(line, "dur").expect("dur"))),
    };
    if let Some(quick) = quick {
        assert_eq!(quick, parsed, "two readings of {line}");
    }
    parsed
}

fn quick_event_line(line: &str) -> Option<LineEvent<'_>> {
    // Plain index loops: this runs for millions of lines in unoptimised
    // test builds.
    fn all(text: &str, accept: fn(u8) -> bool) -> bool {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if !accept(bytes[i]) {
                return false;
            }
            i += 1;
        }
        !bytes.is_empty()
    }
    fn plain(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-' || b == b'+' || b == b' '
    }
    fn digit(b: u8) -> bool {
        b.is_ascii_digit()
    }
    fn micros(text: &str) -> Option<u64> {
        let (whole, frac) = text.split_once('.').unwrap_or((text, "0"));
        if !(all(frac, digit) && frac.len() <= 3) {
            return None;
        }
        let mut ns = number(whole)? * 1000;
        let mut scale = 100;
        for &b in frac.as_bytes() {
            ns += u64::from(b - b'0') * scale;
            scale /= 10;
        }
        Some(ns)
    }
    fn number(text: &str) -> Option<u64> {
        let bytes = text.as_bytes();
        if bytes.is_empty() || bytes.len() > 18 || (bytes[0] == b'0' && bytes.len() > 1) {
            return None;
        }
        let mut n = 0u64;
        let mut i = 0;
        while i < bytes.len() {
            if !bytes[i].is_ascii_digit() {
                return None;
            }
            n = n * 10 + u64::from(bytes[i] - b'0');
            i += 1;
        }
        Some(n)
    }
    let rest = line.strip_prefix("{\"name\":\"")?;
    let (name, rest) = rest.split_once("\",\"cat\":\"")?;
    let (cat, rest) = rest.split_once("\",\"pid\":")?;
    let (pid, rest) = rest.split_once(",\"tid\":")?;
    let (tid, rest) = rest.split_once(",\"ts\":")?;
    let (ts, rest) = rest.split_once(",\"ph\":\"")?;
    let rest = rest.strip_suffix('}')?;
    let (ph, dur) = match rest.split_once("\",\"dur\":") {
        Some((ph, dur)) => (ph, Some(micros(dur)?)),
        None => (rest.strip_suffix('"')?, None),
    };
    if !(all(name, plain) && all(cat, plain)) {
        return None;
    }
    if !(ph.len() == 1 && ph.as_bytes()[0].is_ascii_alphabetic()) {
        return None;
    }
    Some(LineEvent {
        name: Cow::Borrowed(name),
        ph: Cow::Borrowed(ph),
        pid: number(pid)?,
        tid: number(tid)?,
        ts_ns: Some(micros(ts)?),
        dur_ns: dur,
    })
}

// --- checks on complete (X) events ----------------------------------------

/// True when `inner` lies within `outer` in time.
pub fn within(inner: &Event, outer: &Event) -> bool {
    outer.ts() <= inner.ts() && inner.end() <= outer.end()
}

// --- SHA-1 ----------------------------------------------------------------

/// SHA-1 of `data` as 40 lowercase hexadecimal digits (FIPS 180-4), small
/// enough to check instance paths without trusting the runtime's own hash.
pub fn sha1_hex(data: &[u8]) -> String {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xefcd_ab89,
        0x98ba_dcfe,
        0x1032_5476,
        0xc3d2_e1f0,
    ];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&(data.len() as u64 * 8).to_be_bytes());
    for block in message.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, &word) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5a82_7999),
                20..=39 => (b ^ c ^ d, 0x6ed9_eba1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(word);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

/// `path` decoded by Perfetto's own generated classes: what
/// `tests/support/pftrace_events.py` prints.
pub fn decode_pftrace(path: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/pftrace_events.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(path)
        .output()
        .expect("run python3 (scripts/setup-debian.sh --tests installs it)");
    assert!(
        out.status.success(),
        "decoding {} with Perfetto's classes failed (pip package `perfetto`, installed by \
         scripts/setup-debian.sh --tests):\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the decoder prints JSON")
}
