//! What happens to the results after a run: exports and the report.
//!
//! [`post_process`] is the single entry point, called once the per-job
//! files are written.

use super::args::Config;
use super::log::Log;
use std::path::Path;

/// Exports the metrics and makes the report that `config` asks for
/// (`-e`, `-r`) from the files under `out_dir/metrics`. For now it only
/// records what was asked for.
pub fn post_process(config: &Config, out_dir: &Path, log: &Log) {
    for format in &config.exports {
        log.info(&format!(
            "export to {} requested for {}",
            format.name(),
            out_dir.display()
        ));
    }
    if config.report {
        log.info(&format!("report requested for {}", out_dir.display()));
    }
}
