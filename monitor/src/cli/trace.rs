//! The node's counter tracks as a Chrome Trace Format file
//! (`perfflow.monitor.<host>.<pid>.pfw`) that Perfetto loads beside the
//! application's perfflow traces.
//!
//! The events are those the runtime's own sampler writes: one `"C"` event
//! per [`crate::Track`] and sample, named after the track (unit in the
//! name), with `{"value": v}` and a timestamp in microseconds since the
//! Unix epoch taken from [`crate::Snapshot::timestamp_ns`] (wall clock,
//! the time base of perfflow traces). The node is one process, with the
//! monitor's pid and a `process_name` of `perfflow-monitor <host>`.
//!
//! ```text
//! [
//! {"name":"process_name","ph":"M","pid":4242,"tid":4242,"args":{"name":"perfflow-monitor nodeA"}}
//! ,{"name":"proc cpu (%)","ph":"C","pid":4242,"tid":4242,"ts":1763700000123456.789,"args":{"value":99.5}}
//! ]
//! ```
//!
//! Each event starts with its separating comma, so events can be appended
//! at every checkpoint; the closing `]` comes at the end. A file cut short
//! (the monitor was killed) lacks only the `]`, which Perfetto and
//! `chrome://tracing` accept.

use crate::error::Error;
use crate::sampler::Snapshot;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The trace file name of node `host` for monitor `pid`, after the
/// runtime's `perfflow.<format>.<host>.<pid>.pfw`.
pub fn file_name(host: &str, pid: u32) -> String {
    format!(
        "perfflow.monitor.{}.{pid}.pfw",
        perfflow_report::job::file_safe(host)
    )
}

/// Writes counter events to a `.pfw` file.
#[derive(Debug)]
pub struct CounterTrace {
    path: PathBuf,
    file: File,
    pid: u32,
    pending: String,
    events: usize,
}

fn write_ts(out: &mut String, ns: u64) {
    let _ = write!(out, "{}.{:03}", ns / 1000, ns % 1000);
}

impl CounterTrace {
    /// Creates the file with its process name and a metadata event
    /// holding `about` (sampling interval, unavailable sources...).
    pub fn create(dir: &Path, host: &str, pid: u32, about: &Value) -> Result<Self, Error> {
        let path = dir.join(file_name(host, pid));
        let mut file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        let head = format!(
            "[\n{}\n,{}\n",
            json!({"name": "process_name", "ph": "M", "pid": pid, "tid": pid,
                   "args": {"name": format!("perfflow-monitor {host}")}}),
            json!({"name": "perfflow_monitor", "ph": "M", "pid": pid, "tid": pid,
                   "args": about}),
        );
        file.write_all(head.as_bytes())
            .map_err(|e| Error::io(&path, e))?;
        Ok(CounterTrace {
            path,
            file,
            pid,
            pending: String::new(),
            events: 0,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Counter events written or held so far.
    pub fn events(&self) -> usize {
        self.events
    }

    /// Holds one event per track of `snapshot` until the next flush.
    pub fn push(&mut self, snapshot: &Snapshot) {
        let pid = self.pid;
        for t in snapshot.tracks() {
            let name = Value::String(t.name).to_string();
            let _ = write!(
                self.pending,
                ",{{\"name\":{name},\"ph\":\"C\",\"pid\":{pid},\"tid\":{pid},\"ts\":"
            );
            write_ts(&mut self.pending, snapshot.timestamp_ns);
            let _ = writeln!(self.pending, ",\"args\":{{\"value\":{}}}}}", json!(t.value));
            self.events += 1;
        }
    }

    /// Appends the held events to the file.
    pub fn flush(&mut self) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let r = self.file.write_all(self.pending.as_bytes());
        self.pending.clear();
        r.map_err(|e| Error::io(&self.path, e))
    }

    /// Writes what is held and closes the array.
    pub fn finish(mut self) -> Result<(), Error> {
        self.flush()?;
        self.file
            .write_all(b"]\n")
            .and_then(|_| self.file.sync_data())
            .map_err(|e| Error::io(&self.path, e))
    }
}
