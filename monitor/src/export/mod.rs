//! Exports of a job directory's `metrics/` files as tables, in the formats
//! perfmon's `-e` offers, for pandas and the Arrow ecosystem.
//!
//! [`table`] sees a metric group as rows (one per host and time stamp)
//! with perfmon's column names; each format writes that table:
//!
//! | format | file | written by |
//! | --- | --- | --- |
//! | `csv` | `<group>.csv` | [`csv`] |
//! | `json` | `<group>.records.json` | [`records`] |
//! | `parquet` | `<group>.parquet` | arrow-rs's `parquet` ([`parquet`]) |
//! | `feather` | `<group>.feather` | arrow-rs's `arrow-ipc` ([`feather`]) |
//! | `orc` | `<group>.orc` | `orc-rust` ([`orc`]) |
//! | `pickle` | `<group>.pkl` | `serde-pickle` ([`pickle`]) |
//! | `hdf5` | `<group>.h5` | the system HDF5 library, through `hdf5-metno` ([`hdf5`]) |

pub mod arrow;
pub mod csv;
pub mod feather;
#[cfg(feature = "hdf5")]
pub mod hdf5;
pub mod orc;
pub mod parquet;
pub mod pickle;
pub mod records;
pub mod table;

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::report::{input, ReportError};

/// What a format's writer can fail with.
pub type WriteError = Box<dyn std::error::Error + Send + Sync>;

/// A table format [`export`] can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// `<group>.csv`
    Csv,
    /// `<group>.records.json`: an array of row objects.
    Json,
    /// `<group>.parquet`
    Parquet,
    /// `<group>.feather`: the Arrow IPC file format.
    Feather,
    /// `<group>.orc`
    Orc,
    /// `<group>.pkl`: a `dict` of column lists.
    Pickle,
    /// `<group>.h5`: pandas' fixed format, key `<group>`.
    Hdf5,
}

impl ExportFormat {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [ExportFormat; 7] = [
        ExportFormat::Csv,
        ExportFormat::Json,
        ExportFormat::Parquet,
        ExportFormat::Feather,
        ExportFormat::Orc,
        ExportFormat::Pickle,
        ExportFormat::Hdf5,
    ];

    /// The file name suffix, after the group name.
    pub fn suffix(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "records.json",
            ExportFormat::Parquet => "parquet",
            ExportFormat::Feather => "feather",
            ExportFormat::Orc => "orc",
            ExportFormat::Pickle => "pkl",
            ExportFormat::Hdf5 => "h5",
        }
    }

    /// The name `-e` takes.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "json",
            ExportFormat::Parquet => "parquet",
            ExportFormat::Feather => "feather",
            ExportFormat::Orc => "orc",
            ExportFormat::Pickle => "pickle",
            ExportFormat::Hdf5 => "hdf5",
        }
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Why `hdf5` is refused by a perfflow-monitor built without its feature.
pub const WITHOUT_HDF5: &str = "this perfflow-monitor was built without HDF5 support \
     (cargo feature `hdf5`, which the CMake build turns on; it needs libhdf5-dev)";

impl ExportFormat {
    /// Whether this build can write the format (`hdf5` needs the feature
    /// of that name).
    pub fn available(self) -> bool {
        self != ExportFormat::Hdf5 || cfg!(feature = "hdf5")
    }
}

/// A format name [`ExportFormat::from_str`] does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.0;
        let names: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.name()).collect();
        write!(
            f,
            "unknown export format `{name}`; accepted values: {}",
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for ExportFormat {
    type Err = UnknownFormat;

    /// A format's name, in any case.
    fn from_str(s: &str) -> Result<ExportFormat, UnknownFormat> {
        ExportFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// Writes each metric group of `out_dir/metrics/` in each of `formats`
/// into `out_dir`, and returns the paths written (group by group, formats
/// in the order given). It is an error if no group file exists.
pub fn export(out_dir: &Path, formats: &[ExportFormat]) -> Result<Vec<PathBuf>, ReportError> {
    let groups = input::read_groups(out_dir)?;
    if groups.is_empty() {
        return Err(ReportError::new(
            &out_dir.join("metrics"),
            "no metric files (cpu_metrics.json, perf_metrics.json, nv_gpu_metrics.json)",
        ));
    }
    let mut written = Vec::new();
    for group in &groups {
        let table = table::Table::new(group);
        for &format in formats {
            let path = out_dir.join(format!("{}.{}", group.name, format.suffix()));
            match format {
                ExportFormat::Csv => write_file(&path, |out| Ok(csv::write_csv(&table, out)?)),
                ExportFormat::Json => {
                    write_file(&path, |out| Ok(records::write_records(&table, out)?))
                }
                ExportFormat::Parquet => {
                    write_file(&path, |out| parquet::write_parquet(&table, out))
                }
                ExportFormat::Feather => {
                    write_file(&path, |out| feather::write_feather(&table, out))
                }
                ExportFormat::Orc => write_file(&path, |out| orc::write_orc(&table, out)),
                ExportFormat::Pickle => write_file(&path, |out| pickle::write_pickle(&table, out)),
                // The HDF5 library opens the file itself.
                #[cfg(feature = "hdf5")]
                ExportFormat::Hdf5 => hdf5::write_hdf5(&table, &path).map_err(|e| failed(&path, e)),
                #[cfg(not(feature = "hdf5"))]
                ExportFormat::Hdf5 => Err(ReportError::new(&path, WITHOUT_HDF5)),
            }?;
            if !written.contains(&path) {
                written.push(path);
            }
        }
    }
    Ok(written)
}

/// Creates `path` and fills it through a buffered writer; a file that
/// fails is removed rather than left half-written.
fn write_file(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), WriteError>,
) -> Result<(), ReportError> {
    let file = File::create(path).map_err(|e| ReportError::io(path, "cannot create", e))?;
    let mut out = BufWriter::new(file);
    let result = fill(&mut out).and_then(|()| Ok(out.flush()?));
    result.map_err(|error| failed(path, error))
}

/// The error of a file that could not be written, which is removed rather
/// than left half-written.
fn failed(path: &Path, error: WriteError) -> ReportError {
    let _ = std::fs::remove_file(path);
    ReportError::new(path, format!("cannot write: {error}"))
}
