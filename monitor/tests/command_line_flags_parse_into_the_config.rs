//! The command line: every flag, the duration forms, and refusals that
//! name the flag, the value and what was expected.

mod cli_support;

use perfflow_monitor::cli::args::{parse, Config, ExportFormat, Invocation, Target};
use std::path::PathBuf;
use std::time::Duration;

fn config(args: &[&str]) -> Config {
    match parse(args.iter().copied()) {
        Ok(Invocation::Run(c)) => *c,
        other => panic!("{args:?} gave {other:?}"),
    }
}

fn refusal(args: &[&str]) -> String {
    match parse(args.iter().copied()) {
        Err(e) => e.0,
        other => panic!("{args:?} was accepted: {other:?}"),
    }
}

#[test]
fn no_flags_give_perfmons_defaults() {
    let c = config(&[]);
    assert_eq!(c.save_dir, PathBuf::from("."));
    assert_eq!(c.interval, Duration::from_secs(30));
    assert_eq!(c.checkpoint, Duration::from_secs(900));
    assert_eq!(c.target, Target::Scheduler);
    assert!(!c.report && !c.verbose && c.exports.is_empty());
}

#[test]
fn every_flag_sets_its_field_in_short_and_long_form() {
    let c = config(&[
        "-d",
        "/tmp/x",
        "-p",
        "job42",
        "-l",
        "mpirun",
        "-i",
        "2s",
        "-c",
        "60",
        "-r",
        "-e",
        "csv",
        "parquet",
        "--system",
        "sysA",
        "--partition",
        "gpu",
        "--env",
        "prod",
        "--name",
        "t1",
        "-v",
        "--host-name",
        "nodeZ",
    ]);
    assert_eq!(c.save_dir, PathBuf::from("/tmp/x"));
    assert_eq!(c.out_dir(), PathBuf::from("/tmp/x/job42"));
    assert_eq!(c.launcher.as_deref(), Some("mpirun"));
    assert_eq!(c.interval, Duration::from_secs(2));
    assert_eq!(c.checkpoint, Duration::from_secs(60));
    assert!(c.report && c.verbose);
    assert_eq!(c.exports, vec![ExportFormat::Csv, ExportFormat::Parquet]);
    assert_eq!(c.system.as_deref(), Some("sysA"));
    assert_eq!(c.partition.as_deref(), Some("gpu"));
    assert_eq!(c.env.as_deref(), Some("prod"));
    assert_eq!(c.name.as_deref(), Some("t1"));
    assert_eq!(c.host_name.as_deref(), Some("nodeZ"));

    let l = config(&[
        "--save-dir=/a",
        "--prefix",
        "p",
        "--launcher=srun",
        "--sampling-freq",
        "500ms",
        "--check-point=1m",
        "--gen-report",
        "--export",
        "json",
        "--verbose",
    ]);
    assert_eq!(l.save_dir, PathBuf::from("/a"));
    assert_eq!(l.prefix.as_deref(), Some("p"));
    assert_eq!(l.launcher.as_deref(), Some("srun"));
    assert_eq!(l.interval, Duration::from_millis(500));
    assert_eq!(l.checkpoint, Duration::from_secs(60));
    assert!(l.report && l.verbose);
    assert_eq!(l.exports, vec![ExportFormat::Json]);
}

#[test]
fn perfmons_underscore_spellings_are_accepted() {
    let c = config(&[
        "--save_dir",
        "/d",
        "--sampling_freq",
        "5",
        "--check_point",
        "10",
        "--gen_report",
    ]);
    assert_eq!(c.save_dir, PathBuf::from("/d"));
    assert_eq!(c.interval, Duration::from_secs(5));
    assert_eq!(c.checkpoint, Duration::from_secs(10));
    assert!(c.report);
}

#[test]
fn durations_take_seconds_fractions_and_units() {
    assert_eq!(config(&["-i", "0.2"]).interval, Duration::from_millis(200));
    assert_eq!(
        config(&["-i", "500ms"]).interval,
        Duration::from_millis(500)
    );
    assert_eq!(config(&["-i2s"]).interval, Duration::from_secs(2));
    assert_eq!(config(&["-i", "45"]).interval, Duration::from_secs(45));
    assert_eq!(config(&["-c", "1h"]).checkpoint, Duration::from_secs(3600));
}

#[test]
fn a_duration_without_a_unit_is_seconds_with_one_note_saying_so() {
    let c = config(&["-i", "45", "-c", "10m"]);
    assert_eq!(c.interval, Duration::from_secs(45));
    assert_eq!(
        c.notes,
        ["-i: `45` has no unit: read as 45 seconds (write 45s or 45000ms)"]
    );
    assert!(config(&["-i", "45s"]).notes.is_empty());
}

#[test]
fn bad_durations_are_refused_naming_the_flag_and_value() {
    for (flag, value) in [
        ("-i", "0"),
        ("-i", "-3"),
        ("-i", "fast"),
        ("-c", "10parsecs"),
        ("--sampling-freq", "0ms"),
    ] {
        let e = refusal(&[flag, value]);
        assert!(e.contains(flag), "{e}");
        assert!(e.contains(&format!("`{value}`")), "{e}");
    }
    assert!(refusal(&["-i"]).contains("expected a value"));
}

#[test]
fn exports_take_several_values_and_commas() {
    assert_eq!(
        config(&["-e", "csv,json", "parquet", "-v"]).exports,
        vec![ExportFormat::Csv, ExportFormat::Json, ExportFormat::Parquet]
    );
}

#[test]
fn perfmons_export_formats_are_taken_and_others_are_refused_with_the_list() {
    assert_eq!(
        config(&["-e", "pickle,feather", "orc", "CSV"]).exports,
        vec![
            ExportFormat::Pickle,
            ExportFormat::Feather,
            ExportFormat::Orc,
            ExportFormat::Csv,
        ]
    );
    if cfg!(feature = "hdf5") {
        assert_eq!(config(&["-e", "hdf5"]).exports, vec![ExportFormat::Hdf5]);
    } else {
        let e = refusal(&["-e", "hdf5"]);
        assert!(e.contains("without HDF5 support"), "{e}");
    }
    let e = refusal(&["-e", "xlsx"]);
    assert!(
        e.contains("`xlsx`") && e.contains("csv, json, parquet, feather, orc, pickle, hdf5"),
        "{e}"
    );
}

#[test]
fn pid_and_command_choose_the_target() {
    assert_eq!(config(&["--pid", "1234"]).target, Target::Pid(1234));
    assert_eq!(
        config(&["-i", "1", "--", "sh", "-c", "exit 3"]).target,
        Target::Command(vec!["sh".into(), "-c".into(), "exit 3".into()])
    );
    let e = refusal(&["--pid", "abc"]);
    assert!(e.contains("--pid") && e.contains("`abc`"), "{e}");
    assert!(refusal(&["--"]).contains("expected a command"));
    let e = refusal(&["--pid", "12", "--", "true"]);
    assert!(e.contains("--pid 12") && e.contains("give one"), "{e}");
}

#[test]
fn unknown_flags_and_stray_words_are_refused() {
    assert!(refusal(&["--bogus"]).contains("`--bogus`"));
    assert!(refusal(&["./app"]).contains("after `--`"));
}

#[test]
fn merge_takes_one_directory_and_optionally_exports_and_a_report() {
    assert_eq!(
        parse(["merge", "/r"]).unwrap(),
        Invocation::Merge {
            dir: PathBuf::from("/r"),
            exports: vec![],
            report: false
        }
    );
    assert_eq!(
        parse(["merge", "/r", "-e", "csv", "parquet", "-r"]).unwrap(),
        Invocation::Merge {
            dir: PathBuf::from("/r"),
            exports: vec![ExportFormat::Csv, ExportFormat::Parquet],
            report: true
        }
    );
    assert!(refusal(&["merge"]).contains("merge"));
    assert!(refusal(&["merge", "/r", "extra"]).contains("`extra`"));
    assert!(refusal(&["merge", "/r", "-e", "xlsx"]).contains("`xlsx`"));
}

#[test]
fn the_binary_exits_2_on_a_usage_error_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cli_support::monitor(tmp.path());
    c.args(["-i", "0"]);
    let out = cli_support::run(c, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-i") && err.contains("`0`"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn help_shows_scheduler_and_command_examples() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cli_support::monitor(tmp.path());
    c.arg("--help");
    let out = cli_support::run(c, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "srun",
        "PBS_NODEFILE_LOCAL",
        "flux run",
        "-- ./app",
        "merge DIR",
        ".ipc-",
    ] {
        assert!(text.contains(needle), "help lacks {needle}");
    }
}

#[test]
fn without_a_job_the_monitor_asks_for_pid_or_a_command() {
    let tmp = tempfile::tempdir().unwrap();
    let out = cli_support::run(cli_support::monitor(tmp.path()), Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--pid") && err.contains("SLURM_JOB_ID"),
        "{err}"
    );
}

#[test]
fn odd_words_and_huge_durations_are_usage_errors_not_crashes() {
    assert!(refusal(&["-é"]).contains("`-é`"));
    assert!(refusal(&["-i", "99999999999999999999999"]).contains("longer than 168h"));
    assert!(refusal(&["--host-name", "a/b"]).contains("`a/b`"));
    assert!(refusal(&["--host-name", ".."]).contains("`..`"));
}
