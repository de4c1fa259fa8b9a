//! `perfflow-trace export`: writes the database's tables as Parquet.

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{export, ExportOptions};

use super::{say, EXIT_FAILED, EXIT_OK};

/// Write the trace database's tables as Parquet files
///
/// Writes every table of the database (run, run_label, source_file,
/// process, thread, span, instant, flow, counter, metric) as Parquet under
/// DIR, partitioned Hive-style by run and host:
/// DIR/span/run=NAME/host=HOST/part-0.parquet. DuckDB, Polars, Spark and
/// pyarrow read them as they are. An INPUT that is an SQLite database is
/// exported as it is; trace files and directories (what `db` takes) are
/// imported first, as one run, through a temporary database in DIR. DIR
/// must be new or empty. The layout is in docs/database.md.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// The directory to write the tables into
    #[arg(long, value_name = "DIR")]
    pub parquet: PathBuf,
    /// Databases made by `db`, trace files, directories of them, or
    /// perfflow-monitor results directories
    #[arg(required = true, value_name = "FILE|DIR|DB")]
    pub inputs: Vec<PathBuf>,
    /// The run traces given as INPUT belong to (default: `run-1`)
    #[arg(long, value_name = "NAME")]
    pub run: Option<String>,
    /// A label of that run (repeatable)
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = super::db::label)]
    pub labels: Vec<(String, String)>,
}

pub fn run(command: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let options = ExportOptions {
        run: command.run.clone(),
        labels: command.labels.clone(),
    };
    match export(&command.inputs, &command.parquet, &options) {
        Ok(tables) => {
            for table in tables {
                say(
                    out,
                    format_args!(
                        "{}: {} rows in {} files",
                        command.parquet.join(&table.table).display(),
                        table.rows,
                        table.files
                    ),
                );
            }
            EXIT_OK
        }
        Err(error) => {
            say(err, format_args!("perfflow-trace: export: {error}"));
            EXIT_FAILED
        }
    }
}
