//! What happens to the results after a run: exports and the report.
//!
//! [`post_process`] is the single entry point, called once the per-job
//! files are written; the run logs the lines it returns, or its error.

use super::args::Config;
use std::path::Path;

/// Exports the metrics and makes the report that `config` asks for
/// (`-e`, `-r`) from the files under `out_dir/metrics`. Returns lines for
/// the log. For now it only says what was asked for.
pub fn post_process(config: &Config, out_dir: &Path) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    for format in &config.exports {
        notes.push(format!(
            "export to {} requested for {}",
            format.name(),
            out_dir.display()
        ));
    }
    if config.report {
        notes.push(format!("report requested for {}", out_dir.display()));
    }
    Ok(notes)
}
