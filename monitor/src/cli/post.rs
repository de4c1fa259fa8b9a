//! What happens to the results after a run: exports and the report.
//!
//! [`post_process`] is the single entry point, called once the per-job
//! files are written; the run logs the lines it returns, or its error.

use super::args::Config;
use crate::report;
use std::path::Path;

/// Exports the metrics and makes the report that `config` asks for
/// (`-e`, `-r`) from the files under `out_dir/metrics`. Returns lines for
/// the log naming what was written; the first failure ends it.
pub fn post_process(config: &Config, out_dir: &Path) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    if !config.exports.is_empty() {
        let written = report::export(out_dir, &config.exports).map_err(|e| e.to_string())?;
        for path in written {
            notes.push(format!("exported {}", path.display()));
        }
    }
    if config.report {
        let page = report::generate_report(out_dir).map_err(|e| e.to_string())?;
        notes.push(format!("report {}", page.display()));
    }
    Ok(notes)
}
