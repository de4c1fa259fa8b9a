//! Each node's own data, and its combination into the per-job files.
//!
//! A node keeps two files under `metrics/.nodes/`:
//!
//! - `<host>.jsonl`, append-only JSON lines, one per row (see
//!   [`crate::cli::record`]) and one per first sight of a key's unit:
//!
//!   ```text
//!   {"f":"cpu","units":{"cpu_percent":"%"}}
//!   {"f":"cpu","h":"nodeA","t":1763700000.123,"v":{"cpu_percent":12.5}}
//!   ```
//!
//!   Rows are held in memory between checkpoints and then appended with
//!   one write and an `fsync`, so a monitor killed with SIGKILL loses at
//!   most the rows since the last checkpoint. A torn last line is skipped
//!   when reading, and counted in [`CombineSummary::skipped`].
//! - `<host>.meta.json`: the job's and the node's metadata, replaced
//!   atomically (temporary file, then rename) at each checkpoint.
//!
//! [`combine`] reads every node's files and rewrites the per-job files
//! (`cpu_metrics.json`, `perf_metrics.json`, `nv_gpu_metrics.json` where
//! there are GPUs, `meta_data.json`) atomically, under an exclusive `flock`
//! on `metrics/.combine.lock`, so monitors finishing together each see the
//! others' complete files and the last one writes every node. A node file
//! that is not the monitor's (a data file without a sample, a metadata file
//! that does not parse) stops it before any of those files is written.

use super::record::{MetricFile, Row};
use crate::error::Error;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The directory of node files inside a metrics directory.
pub const NODES_DIR: &str = ".nodes";
const LOCK_FILE: &str = ".combine.lock";

fn io_err(path: &Path, e: io::Error) -> Error {
    Error::io(path, e)
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, synced, then renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp.{}", std::process::id()));
    let write = || -> io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
        Ok(())
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(&tmp, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| io_err(path, e))
}

/// One node's append-only data file and its metadata file.
#[derive(Debug)]
pub struct NodeStore {
    data_path: PathBuf,
    meta_path: PathBuf,
    file: File,
    pending: Vec<u8>,
    /// Bytes of whole lines in the data file.
    written: u64,
    known_units: HashSet<(MetricFile, String)>,
    rows: usize,
}

impl NodeStore {
    /// Creates (or empties) the files of node `host` under `metrics_dir`,
    /// and locks the data file for the life of the store: a second monitor
    /// with the same node name and results directory is refused instead of
    /// overwriting this one's data.
    pub fn create(metrics_dir: &Path, host: &str) -> Result<NodeStore, Error> {
        let dir = metrics_dir.join(NODES_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        let data_path = dir.join(format!("{host}.jsonl"));
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&data_path)
            .map_err(|e| io_err(&data_path, e))?;
        // SAFETY: `file` is an open descriptor for the duration of the call.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            let e = if e.kind() == io::ErrorKind::WouldBlock {
                io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "another perfflow-monitor is writing this node's data (same node name and \
                     results directory); give each its own -p or --host-name",
                )
            } else {
                e
            };
            return Err(io_err(&data_path, e));
        }
        file.set_len(0).map_err(|e| io_err(&data_path, e))?;
        Ok(NodeStore {
            meta_path: dir.join(format!("{host}.meta.json")),
            data_path,
            file,
            pending: Vec::new(),
            written: 0,
            known_units: HashSet::new(),
            rows: 0,
        })
    }

    /// The data file.
    pub fn data_path(&self) -> &Path {
        &self.data_path
    }

    /// Rows pushed so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Holds `rows` until the next checkpoint.
    pub fn push(&mut self, rows: &[Row]) {
        for row in rows {
            let mut units = Map::new();
            for (k, u, _) in &row.values {
                if self.known_units.insert((row.file, k.clone())) {
                    units.insert(k.clone(), Value::String(u.to_string()));
                }
            }
            if !units.is_empty() {
                let line = json!({"f": row.file.key(), "units": units});
                self.pending.extend_from_slice(line.to_string().as_bytes());
                self.pending.push(b'\n');
            }
            let mut values = Map::new();
            for (k, _, v) in &row.values {
                values.insert(k.clone(), v.map_or(Value::Null, Value::from));
            }
            let line = json!({"f": row.file.key(), "h": row.host, "t": row.time, "v": values});
            self.pending.extend_from_slice(line.to_string().as_bytes());
            self.pending.push(b'\n');
            self.rows += 1;
        }
    }

    /// Appends the held rows and syncs them to disk. When the write fails
    /// (a full disk), the file is cut back to its last whole line and the
    /// rows stay held for the next checkpoint, so none is written twice.
    pub fn checkpoint(&mut self) -> Result<(), Error> {
        if !self.pending.is_empty() {
            if let Err(e) = self.file.write_all(&self.pending) {
                let _ = self.file.set_len(self.written);
                let _ = self.file.seek(SeekFrom::Start(self.written));
                return Err(io_err(&self.data_path, e));
            }
            self.written += self.pending.len() as u64;
            self.pending.clear();
        }
        self.file
            .sync_data()
            .map_err(|e| io_err(&self.data_path, e))
    }

    /// Replaces the node's metadata file.
    pub fn write_meta(&self, meta: &Value) -> Result<(), Error> {
        let text = serde_json::to_vec_pretty(meta).unwrap_or_default();
        write_atomic(&self.meta_path, &text)
    }
}

/// The series of one host key in one file.
#[derive(Debug, Default)]
struct HostSeries {
    times: Vec<f64>,
    series: BTreeMap<String, Vec<Option<f64>>>,
}

impl HostSeries {
    fn push(&mut self, time: f64, values: &Map<String, Value>) {
        let n = self.times.len();
        self.times.push(time);
        for (k, v) in values {
            let s = self.series.entry(k.clone()).or_default();
            s.resize(n, None);
            s.push(v.as_f64());
        }
        for s in self.series.values_mut() {
            s.resize(n + 1, None);
        }
    }
}

#[derive(Debug, Default)]
struct FileData {
    hosts: BTreeMap<String, HostSeries>,
    units: BTreeMap<String, String>,
}

/// What [`combine`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CombineSummary {
    /// The node names found.
    pub nodes: Vec<String>,
    /// Samples per node (rows of the CPU file).
    pub samples: BTreeMap<String, usize>,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// The node data files with lines that did not parse.
    pub skipped: Vec<SkippedLines>,
}

/// Lines of a node data file that did not parse and were skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLines {
    /// The node data file.
    pub path: PathBuf,
    /// How many lines were skipped.
    pub lines: usize,
    /// The first of them, 1-based.
    pub first: usize,
}

impl fmt::Display for SkippedLines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: skipped {} line(s) that did not parse (the first is line {})",
            self.path.display(),
            self.lines,
            self.first
        )
    }
}

/// What a line of a node data file holds.
enum NodeLine {
    Units,
    Row,
}

/// Adds one line of a node data file to `data`; `None` if it does not
/// parse.
fn read_node_line(line: &[u8], data: &mut BTreeMap<MetricFile, FileData>) -> Option<NodeLine> {
    let v = serde_json::from_slice::<Value>(line).ok()?;
    let file = v["f"].as_str().and_then(MetricFile::from_key)?;
    if let Some(units) = v["units"].as_object() {
        let fd = data.entry(file).or_default();
        for (k, u) in units {
            if let Some(u) = u.as_str() {
                fd.units.insert(k.clone(), u.to_string());
            }
        }
        return Some(NodeLine::Units);
    }
    let (Some(host), Some(t), Some(values)) =
        (v["h"].as_str(), v["t"].as_f64(), v["v"].as_object())
    else {
        return None;
    };
    data.entry(file)
        .or_default()
        .hosts
        .entry(host.to_string())
        .or_default()
        .push(t, values);
    Some(NodeLine::Row)
}

/// Reads one node data file into `data`; returns the lines skipped, if
/// any. A line that does not parse (the torn end of a killed writer) is
/// skipped; a file with lines but no row at all is not the monitor's, and
/// is an error like a failed read, so the per-job files are never remade
/// from less than the node wrote. The exception is a node stopped during
/// its first write: nothing in its file fails to parse but an unfinished
/// last line (no newline after it), and it counts as a node without
/// samples.
fn read_node_file(
    path: &Path,
    data: &mut BTreeMap<MetricFile, FileData>,
) -> Result<Option<SkippedLines>, Error> {
    let f = File::open(path).map_err(|e| io_err(path, e))?;
    let mut reader = BufReader::new(f);
    let mut lines = 0;
    let mut rows = 0;
    let mut skipped: Option<SkippedLines> = None;
    let mut line = Vec::new();
    let mut torn_end = false;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| io_err(path, e))?;
        if read == 0 {
            break;
        }
        let finished = line.last() == Some(&b'\n');
        if finished {
            line.pop();
        }
        lines += 1;
        let before = skipped.as_ref().map_or(0, |s| s.lines);
        match read_node_line(&line, data) {
            Some(NodeLine::Row) => rows += 1,
            Some(NodeLine::Units) => {}
            None => {
                skipped
                    .get_or_insert_with(|| SkippedLines {
                        path: path.to_path_buf(),
                        lines: 0,
                        first: lines,
                    })
                    .lines += 1;
            }
        }
        torn_end = !finished && skipped.as_ref().map_or(0, |s| s.lines) > before;
    }
    let unparsed = skipped.as_ref().map_or(0, |s| s.lines);
    if rows == 0 && unparsed == 1 && torn_end {
        return Ok(skipped);
    }
    if lines > 0 && rows == 0 {
        return Err(Error::BadNodeFile {
            path: path.to_path_buf(),
            message: format!(
                "no sample in its {lines} line(s), {unparsed} of which did not parse; expected \
                 the JSON lines perfflow-monitor writes, such as \
                 {{\"f\":\"cpu\",\"h\":\"<host>\",\"t\":<time>,\"v\":{{...}}}}"
            ),
        });
    }
    Ok(skipped)
}

/// Puts `value` at the dotted `key` of `obj`, creating objects on the way.
/// A key that collides with a value already there is left out.
pub(crate) fn insert_nested(obj: &mut Map<String, Value>, key: &str, value: Value) {
    let mut parts = key.split('.').peekable();
    let mut cur = obj;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            cur.entry(part.to_string()).or_insert(value);
            return;
        }
        let next = cur
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        match next {
            Value::Object(m) => cur = m,
            _ => return,
        }
    }
}

/// A series with every gap filled, as perfmon's schema wants numbers
/// only: a missing value takes the one before it (perfmon pads short
/// series with their last value too), and missing values at the start take
/// the first value seen. `None` if the series has no value at all (the key
/// is then left out).
fn fill_gaps(series: &[Option<f64>]) -> Option<Vec<f64>> {
    let first = series.iter().flatten().next().copied()?;
    let mut last = first;
    Some(
        series
            .iter()
            .map(|v| {
                if let Some(v) = v {
                    last = *v;
                }
                last
            })
            .collect(),
    )
}

fn lock(metrics_dir: &Path) -> Result<File, Error> {
    let path = metrics_dir.join(LOCK_FILE);
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io_err(&path, e))?;
    // SAFETY: `f` is an open descriptor for the duration of the call.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
    if rc != 0 {
        return Err(io_err(&path, io::Error::last_os_error()));
    }
    Ok(f)
}

/// The node metadata files under `nodes_dir`, by node name. One that
/// cannot be read or is not a JSON object is an error: its node's job,
/// times and processes would be lost from the per-job files.
fn read_node_metas(nodes_dir: &Path) -> Result<BTreeMap<String, Value>, Error> {
    let mut out = BTreeMap::new();
    let rd = std::fs::read_dir(nodes_dir).map_err(|e| io_err(nodes_dir, e))?;
    for e in rd {
        let e = e.map_err(|e| io_err(nodes_dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(host) = name.strip_suffix(".meta.json") else {
            continue;
        };
        if host.starts_with('.') {
            continue;
        }
        let path = e.path();
        let bytes = std::fs::read(&path).map_err(|e| io_err(&path, e))?;
        let bad = |message: String| Error::BadNodeFile {
            path: path.clone(),
            message,
        };
        let v = serde_json::from_slice::<Value>(&bytes).map_err(|e| {
            bad(format!(
                "not JSON ({e}); expected the node's metadata object that perfflow-monitor writes"
            ))
        })?;
        let found = match v {
            Value::Object(_) => None,
            Value::Array(_) => Some("an array"),
            Value::String(_) => Some("a string"),
            Value::Number(_) => Some("a number"),
            Value::Bool(_) => Some("a boolean"),
            Value::Null => Some("null"),
        };
        if let Some(found) = found {
            return Err(bad(format!(
                "expected the node's metadata object that perfflow-monitor writes, found {found}"
            )));
        }
        out.insert(host.to_string(), v);
    }
    Ok(out)
}

/// Combines every node's files under `metrics_dir` into the per-job files.
/// Holds the combination lock while reading and writing.
pub fn combine(metrics_dir: &Path) -> Result<CombineSummary, Error> {
    combine_and(metrics_dir, None, |_| ()).map(|(summary, ())| summary)
}

/// [`combine`], then `after` (exports and the report made from the per-job
/// files), still under the combination lock: several nodes finishing at
/// once never write those outputs at the same time, and the last one to
/// finish leaves them complete.
///
/// Only the nodes of one job are combined: `job_id`, or without it (a
/// merge by hand) the job of the node that started last. Node files left
/// in the directory by another job are left out.
pub fn combine_and<R>(
    metrics_dir: &Path,
    job_id: Option<&str>,
    after: impl FnOnce(&CombineSummary) -> R,
) -> Result<(CombineSummary, R), Error> {
    let nodes_dir = metrics_dir.join(NODES_DIR);
    if !nodes_dir.is_dir() {
        return Err(Error::NoNodeData {
            dir: metrics_dir.to_path_buf(),
        });
    }
    let _guard = lock(metrics_dir)?;
    let mut metas = read_node_metas(&nodes_dir)?;
    let job_of = |m: &Value| match &m["job"]["job_id"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let job_id = match job_id {
        Some(j) => Some(j.to_string()),
        None => metas
            .values()
            .max_by(|a, b| {
                let start = |m: &Value| m["start_time"].as_f64().unwrap_or(0.0);
                start(a).total_cmp(&start(b))
            })
            .map(job_of),
    };
    if let Some(job_id) = &job_id {
        metas.retain(|_, m| &job_of(m) == job_id);
    }
    let mut data: BTreeMap<MetricFile, FileData> = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut nodes: BTreeSet<String> = metas.keys().cloned().collect();
    let mut data_files: Vec<PathBuf> = std::fs::read_dir(&nodes_dir)
        .map_err(|e| io_err(&nodes_dir, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    data_files.sort();
    for p in &data_files {
        let Some(stem) = p.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        // With metadata known, a data file belongs to the job through its
        // node's metadata file.
        if job_id.is_some() && !metas.contains_key(&stem) {
            continue;
        }
        nodes.insert(stem);
        skipped.extend(read_node_file(p, &mut data)?);
    }

    let first_meta = metas.values().next().cloned().unwrap_or(Value::Null);
    let job = &first_meta["job"];
    let sampling = job["sampling_frequency"].clone();
    let mut summary = CombineSummary {
        nodes: nodes.iter().cloned().collect(),
        samples: BTreeMap::new(),
        files: Vec::new(),
        skipped,
    };
    for file in MetricFile::ALL {
        let fd = data.remove(&file).unwrap_or_default();
        if file == MetricFile::Gpu && fd.hosts.is_empty() {
            continue;
        }
        let mut out = Map::new();
        let hosts: Vec<String> = match file {
            MetricFile::Gpu => fd.hosts.keys().cloned().collect(),
            _ => nodes.iter().cloned().collect(),
        };
        out.insert("host_names".into(), json!(hosts));
        out.insert("sampling_frequency".into(), sampling.clone());
        out.insert("units".into(), json!(fd.units));
        let mut by_host = fd.hosts;
        for host in &hosts {
            let hs = by_host.remove(host).unwrap_or_default();
            if file == MetricFile::Cpu {
                summary.samples.insert(host.clone(), hs.times.len());
            }
            let mut obj = Map::new();
            obj.insert("time_stamps".into(), json!(hs.times));
            for (k, s) in hs.series {
                if let Some(filled) = fill_gaps(&s) {
                    insert_nested(&mut obj, &k, json!(filled));
                }
            }
            if file == MetricFile::Cpu {
                let meta = metas.get(host);
                let procs = meta
                    .map(|m| m["processes"].clone())
                    .filter(Value::is_array)
                    .unwrap_or_else(|| json!([]));
                obj.insert("child_proc_md".into(), procs);
                let parent = meta
                    .map(|m| m["parent_proc_md"].clone())
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({}));
                obj.insert("parent_proc_md".into(), parent);
            }
            out.insert(host.clone(), Value::Object(obj));
        }
        let path = metrics_dir.join(file.file_name());
        let text = serde_json::to_vec(&Value::Object(out)).unwrap_or_default();
        write_atomic(&path, &text)?;
        summary.files.push(path);
    }

    let mut meta = Map::new();
    if let Some(job) = job.as_object() {
        for (k, v) in job {
            meta.insert(k.clone(), v.clone());
        }
    }
    let times = |key: &'static str| metas.values().filter_map(move |m| m[key].as_f64());
    let start = times("start_time").reduce(f64::min);
    let end = times("end_time").reduce(f64::max);
    meta.insert("start_time".into(), json!(start));
    meta.insert("end_time".into(), json!(end));
    for m in metas.values() {
        if let Some(s) = m["job"].get("exit_status").filter(|v| !v.is_null()) {
            meta.insert("exit_status".into(), s.clone());
        }
    }
    meta.insert("host_names".into(), json!(summary.nodes));
    for host in &summary.nodes {
        let m = metas.get(host).cloned().unwrap_or(Value::Null);
        let mut h = m["hardware"].as_object().cloned().unwrap_or_default();
        h.insert(
            "unavailable".into(),
            m.get("unavailable").cloned().unwrap_or_else(|| json!([])),
        );
        for k in [
            "start_time",
            "end_time",
            "stop_reason",
            "monitor_pid",
            "cpu_accounting",
            "launcher",
            "micro_architecture",
        ] {
            if let Some(v) = m.get(k) {
                h.insert(k.into(), v.clone());
            }
        }
        meta.insert(host.clone(), Value::Object(h));
    }
    let path = metrics_dir.join("meta_data.json");
    let text = serde_json::to_vec_pretty(&Value::Object(meta)).unwrap_or_default();
    write_atomic(&path, &text)?;
    summary.files.push(path);
    let after = after(&summary);
    Ok((summary, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_keys_nest_and_collisions_are_left_out() {
        let mut m = Map::new();
        insert_nested(&mut m, "memory_info.rss", json!([1]));
        insert_nested(&mut m, "memory_info.vms", json!([2]));
        insert_nested(&mut m, "memory_info.rss.x", json!([3]));
        assert_eq!(
            Value::Object(m),
            json!({"memory_info": {"rss": [1], "vms": [2]}})
        );
    }

    #[test]
    fn gpu_rows_make_a_gpu_file_keyed_by_device_and_a_torn_line_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let nodes = tmp.path().join(NODES_DIR);
        std::fs::create_dir_all(&nodes).unwrap();
        let lines = [
            r#"{"f":"cpu","units":{"cpu_percent":"%"}}"#,
            r#"{"f":"cpu","h":"nodeA","t":1.0,"v":{"cpu_percent":50.0}}"#,
            r#"{"f":"gpu","units":{"utilization_rates.gpu":"%"}}"#,
            r#"{"f":"gpu","h":"gpu-0.nodeA","t":1.0,"v":{"utilization_rates.gpu":90.0}}"#,
            r#"{"f":"gpu","h":"gpu-1.nodeA","t":1.0,"v":{"utilization_rates.gpu":null}}"#,
            r#"{"f":"cpu","h":"nodeA","t":2.0,"v":{"cpu_perc"#,
        ];
        std::fs::write(nodes.join("nodeA.jsonl"), lines.join("\n")).unwrap();
        std::fs::write(
            nodes.join("nodeA.meta.json"),
            r#"{"job":{"job_id":"9","sampling_frequency":0.5},"start_time":1.0,"end_time":3.0}"#,
        )
        .unwrap();
        let summary = combine(tmp.path()).unwrap();
        assert_eq!(summary.samples["nodeA"], 1);
        assert_eq!(
            summary.skipped,
            vec![SkippedLines {
                path: nodes.join("nodeA.jsonl"),
                lines: 1,
                first: 6,
            }]
        );
        let read = |f: &str| -> Value {
            serde_json::from_slice(&std::fs::read(tmp.path().join(f)).unwrap()).unwrap()
        };
        let gpu = read("nv_gpu_metrics.json");
        assert_eq!(gpu["host_names"], json!(["gpu-0.nodeA", "gpu-1.nodeA"]));
        assert_eq!(
            gpu["gpu-0.nodeA"]["utilization_rates"]["gpu"],
            json!([90.0])
        );
        // A series without any value is left out.
        assert_eq!(gpu["gpu-1.nodeA"].get("utilization_rates"), None);
        assert_eq!(gpu["units"]["utilization_rates.gpu"], "%");
        assert_eq!(gpu["sampling_frequency"], 0.5);
        let cpu = read("cpu_metrics.json");
        assert_eq!(cpu["nodeA"]["cpu_percent"], json!([50.0]));
        let meta = read("meta_data.json");
        assert_eq!(meta["job_id"], "9");
        assert_eq!(meta["host_names"], json!(["nodeA"]));
    }

    #[test]
    fn without_gpu_rows_there_is_no_gpu_file() {
        let tmp = tempfile::tempdir().unwrap();
        let nodes = tmp.path().join(NODES_DIR);
        std::fs::create_dir_all(&nodes).unwrap();
        std::fs::write(
            nodes.join("n.jsonl"),
            r#"{"f":"cpu","h":"n","t":1.0,"v":{}}"#,
        )
        .unwrap();
        combine(tmp.path()).unwrap();
        assert!(!tmp.path().join("nv_gpu_metrics.json").exists());
        assert!(tmp.path().join("perf_metrics.json").exists());
    }

    #[test]
    fn gaps_take_the_value_before_them_and_a_late_start_the_first_value() {
        assert_eq!(
            fill_gaps(&[None, Some(2.0), None, Some(4.0), None]),
            Some(vec![2.0, 2.0, 2.0, 4.0, 4.0])
        );
        assert_eq!(fill_gaps(&[None, None]), None);
    }

    #[test]
    fn a_key_first_seen_late_is_padded_with_nulls() {
        let mut h = HostSeries::default();
        h.push(1.0, json!({"a": 1.0}).as_object().unwrap());
        h.push(2.0, json!({"a": 2.0, "b": 5.0}).as_object().unwrap());
        h.push(3.0, json!({"b": 6.0}).as_object().unwrap());
        assert_eq!(h.series["a"], vec![Some(1.0), Some(2.0), None]);
        assert_eq!(h.series["b"], vec![None, Some(5.0), Some(6.0)]);
    }
}
