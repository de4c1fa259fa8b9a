//! The monitor's log: a file in the results directory, and stderr with
//! `-v`. Nothing goes to stdout: it is the job's.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for a Unix time in seconds.
pub fn utc_text(unix_s: f64) -> String {
    let t = perfflow_report::html::Utc::of(unix_s);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.milli
    )
}

/// Seconds since the Unix epoch, now.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Where log lines go.
#[derive(Debug)]
pub struct Log {
    file: Mutex<Option<File>>,
    path: Option<PathBuf>,
    verbose: bool,
}

impl Log {
    /// A log to `path` (stderr says once if it cannot be created), and to
    /// stderr when `verbose`.
    pub fn open(path: &Path, verbose: bool) -> Log {
        let file = match File::create(path) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!(
                    "perfflow-monitor: cannot create the log {}: {e}",
                    path.display()
                );
                None
            }
        };
        Log {
            file: Mutex::new(file),
            path: Some(path.to_path_buf()),
            verbose,
        }
    }

    /// A log that only writes to stderr when `verbose`.
    pub fn stderr_only(verbose: bool) -> Log {
        Log {
            file: Mutex::new(None),
            path: None,
            verbose,
        }
    }

    /// The log file, if there is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn line(&self, level: &str, msg: &str) {
        let line = format!("{} {level} {msg}\n", utc_text(unix_now()));
        if let Some(f) = self.file.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            let _ = f.write_all(line.as_bytes());
        }
        if self.verbose {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }

    /// An informational line.
    pub fn info(&self, msg: &str) {
        self.line("INFO", msg);
    }

    /// A warning; also said on stderr.
    pub fn warn(&self, msg: &str) {
        self.line("WARN", msg);
        eprintln!("perfflow-monitor: {msg}");
    }

    /// A detail, written to the log file (and stderr with `-v`).
    pub fn debug(&self, msg: &str) {
        self.line("DEBUG", msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_text_formats_a_known_instant() {
        assert_eq!(utc_text(1_763_700_000.5), "2025-11-21T04:40:00.500Z");
        assert_eq!(utc_text(0.0), "1970-01-01T00:00:00.000Z");
    }
}
