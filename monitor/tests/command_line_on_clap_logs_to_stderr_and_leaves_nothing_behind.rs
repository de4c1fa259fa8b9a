//! The command line's promises beyond parsing: `-v` logs to stderr and
//! never into the job's stdout; a refused command line or a run with
//! nothing to follow leaves no file behind; `--help` documents the exit
//! statuses; completions and manual pages come from the same definition.

mod cli_support;

use std::fs;
use std::path::Path;
use std::time::Duration;

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn verbose_logs_go_to_stderr_and_stdout_is_the_jobs_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cli_support::monitor(tmp.path());
    c.args([
        "-v",
        "-i",
        "100ms",
        "--host-name",
        "n1",
        "--",
        "sh",
        "-c",
        "echo job-output",
    ]);
    let out = cli_support::run(c, Duration::from_secs(60));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "job-output\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(" INFO perfflow-monitor "),
        "no log line on stderr: {err}"
    );
}

#[test]
fn refused_command_lines_leave_no_file_behind() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["-i", "0"][..],
        &["--bogus"],
        &["-e", "xlsx", "--", "true"],
        &["--host-name", "a/b", "--", "true"],
        &["--pid", "2147483647"],
        &[],
    ] {
        let out = cli_support::run(
            {
                let mut c = cli_support::monitor(tmp.path());
                c.args(args);
                c
            },
            Duration::from_secs(20),
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
        assert!(
            entries(tmp.path()).is_empty(),
            "{args:?} left {:?}",
            entries(tmp.path())
        );
    }
}

#[test]
fn help_documents_the_exit_statuses_and_perfmons_spellings_stay_hidden_aliases() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cli_support::monitor(tmp.path());
    c.arg("--help");
    let out = cli_support::run(c, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Exit status:"), "{text}");
    for status in ["  0 ", "  1 ", "  2 ", "  127 "] {
        assert!(text.contains(status), "help lacks exit status {status}");
    }
    assert!(text.contains("--sampling-freq") && !text.contains("--sampling_freq"));
}

#[test]
fn completions_and_manual_pages_come_from_the_definition() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = cli_support::monitor(tmp.path());
    c.args(["completions", "bash"]);
    let out = cli_support::run(c, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(script.contains("perfflow-monitor") && script.contains("--sampling-freq"));
    assert!(script.contains("merge"));

    let mut c = cli_support::monitor(tmp.path());
    c.args(["man", "pages"]);
    let out = cli_support::run(c, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0));
    let page = fs::read_to_string(tmp.path().join("pages/perfflow-monitor.1")).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH perfflow-monitor 1"),
        "{page}"
    );
    assert!(page.contains("sampling\\-freq"));
    assert!(tmp.path().join("pages/perfflow-monitor-merge.1").is_file());
}
