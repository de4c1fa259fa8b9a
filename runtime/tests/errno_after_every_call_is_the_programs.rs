//! A woven call leaves `errno` as the function left it: no call into the
//! runtime changes it, neither the first event (the runtime starts and
//! makes its log directory, which exists: `mkdir` says EEXIST), nor the
//! events that hand a full chunk over (locks, wake-ups), nor the region
//! and async calls, nor `cpu-mem-usage`'s reads of `/proc`, in either
//! trace format and with either clock. See `tests/c/errno_is_the_programs.c`.

mod support;

use support::{command, program, run, Scratch};

#[test]
fn errno_after_every_call_is_the_programs() {
    for (options, pairs) in [
        ("log-dir=./", 300_000),
        ("log-format=perfetto:clock=monotonic", 300_000),
        ("cpu-mem-usage=True", 3_000),
    ] {
        let dir = Scratch::new(&format!(
            "errno-{}",
            options.replace([':', '=', '/', '.'], "-")
        ));
        let mut cmd = command(&program("errno_is_the_programs"), &dir.path);
        cmd.arg(pairs.to_string()).env("PERFFLOW_OPTIONS", options);
        let done = run(&mut cmd);
        assert!(done.status.success(), "{options}: {}", done.stderr);
        assert!(
            done.stdout.contains("errno kept"),
            "{options}: {}; stderr: {}",
            done.stdout,
            done.stderr
        );
    }
}
