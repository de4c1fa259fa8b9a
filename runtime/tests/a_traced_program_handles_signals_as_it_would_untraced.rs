//! A traced program handles signals exactly as it would untraced: the
//! runtime takes SIGTERM and SIGABRT by default (the `signals` option),
//! leaves every other signal's action at the default, never keeps a signal
//! from the program's own handler or `signalfd`, and never has one of its
//! own threads picked to receive a signal meant for the program.
//!
//! Each test runs `tests/c/signal_dispositions.c` in one mode traced and
//! untraced (`log-enable=False`: the runtime does nothing) and compares how
//! it ends and what it prints.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{command, compile_with, program, run, Finished, Scratch};

/// How the program ended (exit code or signal) and what it printed.
fn outcome(done: &Finished) -> (Option<i32>, Option<i32>, String) {
    (done.status.code(), done.signal(), done.stdout.clone())
}

fn run_mode(bin: &Path, dir: &Scratch, mode: &str, options: Option<&str>) -> Finished {
    let mut cmd = command(bin, &dir.path);
    cmd.arg(mode);
    if let Some(options) = options {
        cmd.env("PERFFLOW_OPTIONS", options);
    }
    run(&mut cmd)
}

/// Runs `mode` untraced and with each of `options` (None: the defaults),
/// asserts every traced run ends as the untraced one did, and returns that.
fn same_as_untraced(mode: &str, options: &[Option<&str>]) -> (Option<i32>, Option<i32>, String) {
    let dir = Scratch::new(&format!("dispositions-{mode}"));
    let bin = program("signal_dispositions");
    let untraced = run_mode(&bin, &dir, mode, Some("log-enable=False"));
    for &traced_options in options {
        let traced = run_mode(&bin, &dir, mode, traced_options);
        assert_eq!(
            outcome(&traced),
            outcome(&untraced),
            "{mode} with PERFFLOW_OPTIONS={traced_options:?}; stderr: {}",
            traced.stderr
        );
        assert_eq!(traced.stderr, "", "{mode} {traced_options:?}");
    }
    outcome(&untraced)
}

#[test]
fn by_default_only_sigterm_and_sigabrt_get_a_handler_and_every_other_action_stays_default() {
    let dir = Scratch::new("dispositions-default");
    let bin = program("signal_dispositions");
    let traced = run_mode(&bin, &dir, "dispositions", None);
    assert!(traced.status.success(), "stderr: {}", traced.stderr);
    assert_eq!(
        traced.stdout,
        "INT=default\nHUP=default\nQUIT=default\nTERM=handler\nABRT=handler\n"
    );
    let untraced = same_as_untraced("dispositions", &[Some("signals=none")]);
    assert_eq!(
        untraced.2,
        "INT=default\nHUP=default\nQUIT=default\nTERM=default\nABRT=default\n"
    );
}

#[test]
fn the_signals_option_names_the_signals_that_get_a_handler() {
    let dir = Scratch::new("dispositions-option");
    let bin = program("signal_dispositions");
    let traced = run_mode(&bin, &dir, "dispositions", Some("signals=INT,sigquit"));
    assert!(traced.status.success(), "stderr: {}", traced.stderr);
    assert_eq!(
        traced.stdout,
        "INT=handler\nHUP=default\nQUIT=handler\nTERM=default\nABRT=default\n"
    );
}

#[test]
fn a_sigint_handler_installed_only_over_the_default_action_gets_sigint() {
    let got = same_as_untraced("default-only", &[None, Some("signals=TERM,ABRT")]);
    assert_eq!(got, (Some(0), None, "installed\ninterrupted\n".to_string()));
}

#[test]
fn a_sigterm_handler_installed_after_the_first_event_replaces_the_runtimes() {
    let got = same_as_untraced(
        "late-handler",
        &[None, Some("signals=TERM,INT,HUP,QUIT,ABRT")],
    );
    assert_eq!(got, (Some(0), None, "handled TERM\n".to_string()));
}

/// Signals blocked by the program's threads reach its `signalfd` even
/// though the runtime's threads started before the program blocked them;
/// SIGINT, left unblocked on one helper thread, ends the process there.
#[test]
fn signals_read_through_a_signalfd_reach_it_and_an_unblocked_one_ends_the_process() {
    let got = same_as_untraced(
        "signalfd",
        &[
            None,
            Some("signals=none"),
            Some("signals=TERM,INT,HUP,QUIT,ABRT"),
        ],
    );
    assert_eq!(
        got,
        (None, Some(libc::SIGINT), "read 1\nread 1\n".to_string())
    );
}

/// `tests/c/embedded_python.c`, linked with the runtime and with CPython
/// (`python3-config --embed`, from the python3-dev package).
fn embedded_python() -> PathBuf {
    let flags = |what: &str| -> Vec<String> {
        let out = Command::new("python3-config")
            .args(["--embed", what])
            .output()
            .expect("python3-config (package python3-dev) is needed to embed CPython");
        assert!(out.status.success(), "python3-config --embed {what}");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("perfflow-e2e")
        .join(env!("CARGO_CRATE_NAME"));
    std::fs::create_dir_all(&dir).expect("create build dir");
    let bin = dir.join("embedded_python");
    compile_with(
        "embedded_python",
        &bin,
        &flags("--includes"),
        &flags("--ldflags"),
    );
    bin
}

#[test]
fn embedded_cpython_started_after_the_first_event_gets_keyboard_interrupt() {
    let dir = Scratch::new("embedded-python");
    let bin = embedded_python();
    for options in [None, Some("log-enable=False")] {
        let mut cmd = command(&bin, &dir.path);
        if let Some(options) = options {
            cmd.env("PERFFLOW_OPTIONS", options);
        }
        let done = run(&mut cmd);
        assert_eq!(
            (done.status.code(), done.stdout.as_str()),
            (Some(0), "KeyboardInterrupt\n"),
            "PERFFLOW_OPTIONS={options:?}; stderr: {}",
            done.stderr
        );
    }
}
