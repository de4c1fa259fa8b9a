//! The per-job metrics directory, parsed into typed groups and metadata.
//!
//! [`parse_group`] and [`parse_metadata`] read text and never touch a file;
//! [`read_groups`] and [`read_metadata`] bind them to `<dir>/metrics/`.
//!
//! A group file (`cpu_metrics.json`, `perf_metrics.json`,
//! `nv_gpu_metrics.json`) lists its hosts in `host_names`; each host's
//! object holds `time_stamps` and the series. Objects nest: the series
//! `package-0` inside `rapl_powercap` is named `rapl_powercap.package-0`.
//! Arrays of numbers and nulls are series; arrays of strings and scalars are
//! metadata and skipped. A series shorter than `time_stamps` (a node that
//! stopped early) is padded with missing values; values past the last time
//! stamp have no time and are dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::Path;

use serde_json::{Map, Value};

use super::error::ReportError;

/// The metric groups, in the order they are exported and reported.
pub const GROUPS: [&str; 3] = ["cpu_metrics", "perf_metrics", "nv_gpu_metrics"];

/// One metric file: every host's series.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricGroup {
    /// The file stem, for example `cpu_metrics`.
    pub name: String,
    /// Unit of each series that has one.
    pub units: BTreeMap<String, String>,
    /// Hosts in the order of `host_names`.
    pub hosts: Vec<HostSeries>,
}

/// One host's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSeries {
    /// The host name (for GPUs `gpu-<n>.<host>`).
    pub host: String,
    /// Fractional Unix seconds.
    pub time_stamps: Vec<f64>,
    /// Series by dotted name, each as long as `time_stamps`.
    pub series: BTreeMap<String, Vec<Option<f64>>>,
}

impl MetricGroup {
    /// Every series name of any host, sorted.
    pub fn series_names(&self) -> Vec<&str> {
        let names: BTreeSet<&str> = self
            .hosts
            .iter()
            .flat_map(|h| h.series.keys().map(String::as_str))
            .collect();
        names.into_iter().collect()
    }

    /// The unit of `series`, if it has a non-empty one.
    pub fn unit(&self, series: &str) -> Option<&str> {
        self.units
            .get(series)
            .map(String::as_str)
            .filter(|u| !u.is_empty())
    }

    /// The earliest time stamp of any host.
    pub fn first_time(&self) -> Option<f64> {
        self.hosts
            .iter()
            .filter_map(|h| h.time_stamps.first().copied())
            .reduce(f64::min)
    }
}

/// The job's `meta_data.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct JobMetadata {
    /// The job id, as text.
    pub job_id: String,
    /// The whole top-level object, for the other fields.
    pub fields: Map<String, Value>,
    /// Hardware description per host, in the order of `host_names`.
    pub hosts: Vec<HostMetadata>,
}

/// What `meta_data.json` says about one host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostMetadata {
    /// The host name.
    pub host: String,
    /// The host's object without `unavailable` (free-form).
    pub hardware: Map<String, Value>,
    /// Sources that could not run there, as `source: reason`.
    pub unavailable: Vec<String>,
}

impl JobMetadata {
    /// A top-level scalar field as text (`None` when absent or null).
    pub fn text(&self, key: &str) -> Option<String> {
        scalar_text(self.fields.get(key)?)
    }

    /// A top-level numeric field.
    pub fn number(&self, key: &str) -> Option<f64> {
        self.fields.get(key)?.as_f64()
    }

    /// The command line, its words joined by spaces.
    pub fn command(&self) -> Option<String> {
        match self.fields.get("command")? {
            Value::Array(words) => Some(
                words
                    .iter()
                    .filter_map(scalar_text)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            other => scalar_text(other),
        }
    }
}

/// A JSON scalar as display text; `None` for null, arrays and objects.
pub fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Parses one group file's text; the error says what was expected where.
pub fn parse_group(name: &str, text: &str) -> Result<MetricGroup, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let top = root
        .as_object()
        .ok_or("expected a JSON object at the top level")?;
    let host_names = string_list(top.get("host_names"), "host_names")?;
    let units = match top.get("units") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(u) => Ok((k.clone(), u.clone())),
                _ => Err(format!("`units.{k}`: expected a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`units`: expected an object".to_string()),
    };
    let mut hosts = Vec::with_capacity(host_names.len());
    for host in host_names {
        let object = top
            .get(&host)
            .ok_or_else(|| format!("host `{host}` is in `host_names` but has no object"))?
            .as_object()
            .ok_or_else(|| format!("`{host}`: expected an object"))?;
        hosts.push(parse_host(&host, object)?);
    }
    Ok(MetricGroup {
        name: name.to_string(),
        units,
        hosts,
    })
}

fn parse_host(host: &str, object: &Map<String, Value>) -> Result<HostSeries, String> {
    let bad_times = || format!("`{host}.time_stamps`: expected an array of numbers");
    let time_stamps = match object.get("time_stamps") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_f64().ok_or_else(bad_times))
            .collect::<Result<Vec<f64>, String>>()?,
        _ => return Err(bad_times()),
    };
    let mut series = BTreeMap::new();
    for (key, value) in object {
        if key != "time_stamps" {
            collect_series(host, key, value, &mut series)?;
        }
    }
    for values in series.values_mut() {
        values.resize(time_stamps.len(), None);
    }
    Ok(HostSeries {
        host: host.to_string(),
        time_stamps,
        series,
    })
}

fn collect_series(
    host: &str,
    name: &str,
    value: &Value,
    out: &mut BTreeMap<String, Vec<Option<f64>>>,
) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                collect_series(host, &format!("{name}.{key}"), inner, out)?;
            }
        }
        Value::Array(items) => {
            if items.iter().all(|v| v.is_number() || v.is_null()) {
                out.insert(name.to_string(), items.iter().map(Value::as_f64).collect());
            } else if !items.iter().all(|v| v.is_string() || v.is_null()) {
                return Err(format!(
                    "`{host}.{name}`: expected an array of numbers and nulls (a series) \
                     or of strings (metadata)"
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

fn string_list(value: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    let bad = || format!("`{key}`: expected an array of strings");
    let items = value.and_then(Value::as_array).ok_or_else(bad)?;
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let s = item.as_str().ok_or_else(bad)?;
        if !seen.insert(s) {
            return Err(format!("`{key}`: `{s}` is listed twice"));
        }
        out.push(s.to_string());
    }
    Ok(out)
}

/// Parses `meta_data.json`'s text.
pub fn parse_metadata(text: &str) -> Result<JobMetadata, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(fields) = root else {
        return Err("expected a JSON object at the top level".to_string());
    };
    let job_id = fields
        .get("job_id")
        .and_then(scalar_text)
        .ok_or("`job_id`: expected a string or a number")?;
    let host_names = match fields.get("host_names") {
        None | Some(Value::Null) => Vec::new(),
        value => string_list(value, "host_names")?,
    };
    let mut hosts = Vec::with_capacity(host_names.len());
    for host in host_names {
        let mut hardware = match fields.get(&host) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => return Err(format!("`{host}`: expected an object")),
        };
        let unavailable = match hardware.remove("unavailable") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
            Some(_) => return Err(format!("`{host}.unavailable`: expected an array")),
        };
        hosts.push(HostMetadata {
            host,
            hardware,
            unavailable,
        });
    }
    Ok(JobMetadata {
        job_id,
        fields,
        hosts,
    })
}

/// Reads every group file present in `out_dir/metrics/`, in [`GROUPS`]
/// order; absent files are skipped.
pub fn read_groups(out_dir: &Path) -> Result<Vec<MetricGroup>, ReportError> {
    let mut groups = Vec::new();
    for name in GROUPS {
        let path = out_dir.join("metrics").join(format!("{name}.json"));
        match fs::read_to_string(&path) {
            Ok(text) => {
                groups.push(parse_group(name, &text).map_err(|p| ReportError::new(&path, p))?)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(ReportError::io(&path, "cannot read", e)),
        }
    }
    Ok(groups)
}

/// Reads `out_dir/metrics/meta_data.json`.
pub fn read_metadata(out_dir: &Path) -> Result<JobMetadata, ReportError> {
    let path = out_dir.join("metrics").join("meta_data.json");
    let text = fs::read_to_string(&path).map_err(|e| ReportError::io(&path, "cannot read", e))?;
    parse_metadata(&text).map_err(|p| ReportError::new(&path, p))
}
