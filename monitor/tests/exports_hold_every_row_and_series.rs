//! CSV, records JSON and Parquet exports of the fixture job directory.

mod job_dir;

use std::fs;
use std::path::Path;

use perfflow_monitor::export::{export, ExportFormat};
use serde_json::{json, Value};

const CSV: &str = "\
Host,Timestamps,cpu_percent [%],idle,memory_rss [bytes],\"only_b [count, \"\"raw\"\"]\",RAPL dram 0 [W],RAPL package 0 [W]
nodeA,1763700000,10,0,1000,,1,50.5
nodeA,1763700001,20.5,0,2000,,2,60
nodeA,1763700002,,0,3000,,3,70
nodeB,1763700000.25,5,,10,1,,
nodeB,1763700001.25,6,,20,2,,
nodeB,1763700002.25,,,30,3,,
";

fn exported(formats: &[ExportFormat]) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    let written = export(dir.path(), formats).unwrap();
    let names = written
        .iter()
        .map(|p| {
            assert_eq!(p.parent(), Some(dir.path()));
            p.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    (dir, names)
}

#[test]
fn export_writes_one_file_per_group_and_format() {
    let formats = [ExportFormat::Csv, ExportFormat::Json, ExportFormat::Parquet];
    let (_dir, names) = exported(&formats);
    assert_eq!(
        names,
        [
            "cpu_metrics.csv",
            "cpu_metrics.records.json",
            "cpu_metrics.parquet",
            "nv_gpu_metrics.csv",
            "nv_gpu_metrics.records.json",
            "nv_gpu_metrics.parquet",
        ]
    );
}

#[test]
fn csv_has_a_row_per_host_and_time_with_units_in_headers() {
    let (dir, _) = exported(&[ExportFormat::Csv]);
    let text = fs::read_to_string(dir.path().join("cpu_metrics.csv")).unwrap();
    assert_eq!(text, CSV);
}

#[test]
fn records_json_is_an_array_of_row_objects_with_nulls() {
    let (dir, _) = exported(&[ExportFormat::Json]);
    let text = fs::read_to_string(dir.path().join("cpu_metrics.records.json")).unwrap();
    let rows: Value = serde_json::from_str(&text).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 6);
    assert_eq!(
        rows[2],
        json!({
            "Host": "nodeA",
            "Timestamps": 1763700002.0,
            "cpu_percent [%]": null,
            "idle": 0.0,
            "memory_rss [bytes]": 3000.0,
            "only_b [count, \"raw\"]": null,
            "RAPL dram 0 [W]": 3.0,
            "RAPL package 0 [W]": 70.0
        })
    );
    assert_eq!(rows[5]["Host"], "nodeB");
    assert_eq!(rows[5]["Timestamps"], 1763700002.25);
    assert_eq!(rows[5]["memory_rss [bytes]"], 30.0);
    assert_eq!(rows[5]["cpu_percent [%]"], Value::Null);
}

#[test]
fn parquet_file_is_framed_by_magic_and_a_footer_length() {
    let (dir, _) = exported(&[ExportFormat::Parquet]);
    let bytes = fs::read(dir.path().join("cpu_metrics.parquet")).unwrap();
    assert_eq!(&bytes[..4], b"PAR1");
    assert_eq!(&bytes[bytes.len() - 4..], b"PAR1");
    let n = bytes.len();
    let footer_len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    assert!(
        footer_len > 0 && footer_len + 12 < n,
        "footer length {footer_len} in {n} bytes"
    );
    let footer = &bytes[n - 8 - footer_len..n - 8];
    for name in [
        "Host",
        "Timestamps",
        "RAPL package 0 [W]",
        "only_b [count, \"raw\"]",
    ] {
        assert!(
            footer.windows(name.len()).any(|w| w == name.as_bytes()),
            "footer lacks column {name}"
        );
    }
}

#[test]
fn format_names_parse_in_any_case_and_unknown_ones_list_the_accepted() {
    assert_eq!("CSV".parse::<ExportFormat>().unwrap(), ExportFormat::Csv);
    assert_eq!("json".parse::<ExportFormat>().unwrap(), ExportFormat::Json);
    assert_eq!(
        "Parquet".parse::<ExportFormat>().unwrap(),
        ExportFormat::Parquet
    );
    assert_eq!(
        "feather".parse::<ExportFormat>().unwrap(),
        ExportFormat::Feather
    );
    assert_eq!("ORC".parse::<ExportFormat>().unwrap(), ExportFormat::Orc);
    assert_eq!(
        "pickle".parse::<ExportFormat>().unwrap(),
        ExportFormat::Pickle
    );
    assert_eq!("HDF5".parse::<ExportFormat>().unwrap(), ExportFormat::Hdf5);
    let err = "xlsx".parse::<ExportFormat>().unwrap_err().to_string();
    assert!(
        err.contains("xlsx") && err.contains("csv, json, parquet, feather, orc, pickle, hdf5"),
        "{err}"
    );
}

fn export_error(file: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    fs::write(dir.path().join("metrics").join(file), text).unwrap();
    let err = export(dir.path(), &[ExportFormat::Csv])
        .unwrap_err()
        .to_string();
    let path = dir.path().join("metrics").join(file);
    assert!(err.starts_with(&format!("{}: ", path.display())), "{err}");
    err
}

#[test]
fn malformed_metric_files_are_errors_naming_the_file_and_the_problem() {
    let err = export_error("cpu_metrics.json", "{\"host_names\": [\"a\"");
    assert!(err.contains("not valid JSON"), "{err}");
    let err = export_error("cpu_metrics.json", "[1, 2]");
    assert!(err.contains("expected a JSON object"), "{err}");
    let err = export_error("cpu_metrics.json", "{\"host_names\": [\"a\"]}");
    assert!(err.contains("host `a`"), "{err}");
    let err = export_error(
        "perf_metrics.json",
        "{\"host_names\": [\"a\"], \"a\": {\"time_stamps\": [1, \"x\"]}}",
    );
    assert!(err.contains("a.time_stamps"), "{err}");
    let err = export_error(
        "cpu_metrics.json",
        "{\"host_names\": [\"a\"], \"a\": {\"time_stamps\": [1], \"x\": {\"y\": [true]}}}",
    );
    assert!(err.contains("`a.x.y`"), "{err}");
}

#[test]
fn a_directory_without_metric_files_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = export(dir.path(), &[ExportFormat::Csv]).unwrap_err();
    assert_eq!(err.path, dir.path().join("metrics"));
    assert!(!Path::new(&dir.path().join("cpu_metrics.csv")).exists());
}
