//! Files perfmon writes beside the metrics for later tools: the list of
//! perf events the node could count (`.perf_event_list.json`, read by
//! perfmon's data frame code to name the perf columns) and, with `-v`, the
//! run's configuration per node (`configs/<host>_run_config.yml`).

use super::args::{Config, Target};
use super::record::{MetricFile, Row};
use super::store::{insert_nested, write_atomic};
use crate::error::Error;
use crate::Sampler;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The file naming the perf events and metrics of a run.
pub const PERF_EVENT_LIST: &str = ".perf_event_list.json";

/// perfmon's perf event list made from the first perf row: the host, the
/// sampling interval, and every group (`hardware_events`,
/// `software_events`, `FLOPS_DP`, `L2`...) with an empty list per event
/// and per derived metric. `None` for a row of another file.
pub fn perf_event_list(row: &Row, sampling_s: f64) -> Option<Value> {
    if row.file != MetricFile::Perf {
        return None;
    }
    let mut out = Map::new();
    out.insert("host_name".into(), json!(row.host));
    out.insert("sampling_frequency".into(), json!(sampling_s));
    out.insert("time_stamps".into(), json!([]));
    for (key, _, _) in &row.values {
        insert_nested(&mut out, key, json!([]));
    }
    Some(Value::Object(out))
}

/// Writes the perf event list under `out_dir`.
pub fn write_perf_event_list(out_dir: &Path, list: &Value) -> Result<PathBuf, Error> {
    let path = out_dir.join(PERF_EVENT_LIST);
    let text = serde_json::to_vec_pretty(list).unwrap_or_default();
    write_atomic(&path, &text)?;
    Ok(path)
}

/// The run's configuration as the node sees it once its sources are
/// probed: the command line's settings, the job, the sources available and
/// unavailable, the CPU accounting and the perf groups.
pub fn run_config(config: &Config, host: &str, job_id: &str, sampler: &Sampler) -> Value {
    let target = match &config.target {
        Target::Scheduler => json!({"scheduler": true}),
        Target::Pid(p) => json!({"pid": p}),
        Target::Command(c) => json!({
            "command": c.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>()
        }),
    };
    let cpu = crate::source::perf::CpuId::read(&sampler.config().proc_root);
    json!({
        "host_name": host,
        "job_id": job_id,
        "save_dir": config.save_dir.display().to_string(),
        "prefix": config.prefix,
        "launcher": config.launcher,
        "sampling_freq": config.interval.as_secs_f64(),
        "check_point": config.checkpoint.as_secs_f64(),
        "gen_report": config.report,
        "export": config.exports.iter().map(|e| format!("{e:?}").to_lowercase()).collect::<Vec<_>>(),
        "system": config.system,
        "partition": config.partition,
        "env": config.env,
        "name": config.name,
        "verbose": config.verbose,
        "target": target,
        "metrics": sampler.available().iter().map(ToString::to_string).collect::<Vec<_>>(),
        "unavailable": sampler.unavailable().iter().map(ToString::to_string).collect::<Vec<_>>(),
        "micro_architecture": cpu.as_ref().and_then(crate::groups::micro_architecture),
        "perf_groups": format!("{:?}", config.perf_groups),
        "cpu_accounting": sampler.cpu_accounting().map(|a| a.method()),
    })
}

/// Writes `configs/<host>_run_config.yml` under `out_dir`. The text is
/// JSON, which YAML 1.2 parsers read as YAML.
pub fn write_run_config(out_dir: &Path, host: &str, value: &Value) -> Result<PathBuf, Error> {
    let dir = out_dir.join("configs");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join(format!("{host}_run_config.yml"));
    let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
    text.push(b'\n');
    write_atomic(&path, &text)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_perf_event_list_nests_every_key_of_the_perf_row() {
        let row = Row {
            file: MetricFile::Perf,
            host: "n1".into(),
            time: 1.0,
            values: vec![
                ("hardware_events.cycles".into(), "count".into(), Some(5.0)),
                ("FLOPS_DP.FP_SCALAR_DOUBLE".into(), "count".into(), None),
                ("FLOPS_DP.DP".into(), "MFLOP/s".into(), Some(1.0)),
            ],
        };
        let list = perf_event_list(&row, 30.0).unwrap();
        assert_eq!(
            list,
            json!({
                "host_name": "n1",
                "sampling_frequency": 30.0,
                "time_stamps": [],
                "hardware_events": {"cycles": []},
                "FLOPS_DP": {"FP_SCALAR_DOUBLE": [], "DP": []},
            })
        );
        let cpu = Row {
            file: MetricFile::Cpu,
            ..row
        };
        assert_eq!(perf_event_list(&cpu, 30.0), None);
    }
}
