//! A woven shared library that is `dlclose`d before the process exits:
//! its events are written after it is unmapped, so the runtime must not
//! read its site descriptors then. The program exits normally, the trace is
//! complete and names the library's events right, and a second library
//! loaded afterwards (where the first one was) gets its own names.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

/// Builds `tests/c/dlclosed_lib.c` as `out`, its woven function named
/// `function`, linked to the shared runtime.
fn build_library(function: &str, out: &Path) {
    let dir = lib_dir("libperfflow_runtime.so");
    let result = Command::new("cc")
        .args(["-O1", "-g", "-Wall", "-Werror", "-shared", "-fPIC", "-I"])
        .arg(include_dir())
        .arg("-I")
        .arg(source_dir())
        .arg(format!("-DLIB_FN=\"{function}\""))
        .arg(source_dir().join("dlclosed_lib.c"))
        .arg("-o")
        .arg(out)
        .arg("-L")
        .arg(&dir)
        .arg("-lperfflow_runtime")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .output()
        .expect("run cc");
    assert!(
        result.status.success(),
        "building {}: {}",
        out.display(),
        String::from_utf8_lossy(&result.stderr)
    );
}

/// The host program, linked to the shared runtime.
fn build_host(out: &Path) {
    let dir = lib_dir("libperfflow_runtime.so");
    let result = Command::new("cc")
        .args(["-O1", "-g", "-Wall", "-Werror", "-I"])
        .arg(include_dir())
        .arg("-I")
        .arg(source_dir())
        .arg(source_dir().join("dlclose_before_exit.c"))
        .arg("-o")
        .arg(out)
        .arg("-L")
        .arg(&dir)
        .arg("-lperfflow_runtime")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-ldl")
        .output()
        .expect("run cc");
    assert!(
        result.status.success(),
        "building the host: {}",
        String::from_utf8_lossy(&result.stderr)
    );
}

#[test]
fn a_dlclosed_library_leaves_its_events_named_and_the_process_exits_normally() {
    let scratch = Scratch::new("dlclose");
    let lib_a: PathBuf = scratch.join("libwoven_a.so");
    let lib_b: PathBuf = scratch.join("libwoven_b.so");
    // Names of the same length: both builds lay their sites out alike.
    build_library("lib_a_work", &lib_a);
    build_library("lib_b_work", &lib_b);
    let host = scratch.join("host");
    build_host(&host);

    let done = run(command(&host, &scratch.path).arg(&lib_a).arg(&lib_b));
    assert_eq!(
        done.signal(),
        None,
        "the program died of a signal; stderr: {}",
        done.stderr
    );
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(done.printed("a_unmapped").as_deref(), Some("1"));
    assert_eq!(done.printed("b_unmapped").as_deref(), Some("1"));
    eprintln!(
        "second library's site at the first one's address: {:?}",
        done.printed("same_address")
    );

    let files = pfw_files(&scratch.path);
    assert_eq!(files.len(), 1, "{files:?}");
    let trace = Trace::read(&files[0]);
    trace.assert_complete(done.pid());
    let count = |name: &str, ph: &str| trace.named(name).iter().filter(|e| e.ph() == ph).count();
    assert_eq!(count("lib_a_work", "B"), 3);
    assert_eq!(count("lib_a_work", "E"), 3);
    assert_eq!(count("lib_b_work", "B"), 5);
    assert_eq!(count("lib_b_work", "E"), 5);
    // Left open inside each library, ended when the trace was completed.
    assert_eq!(count("lib_a_work_open", "B"), 1);
    assert_eq!(count("lib_b_work_open", "B"), 1);
    assert_eq!(count("host_main", "B"), 1);
    for e in trace.named("lib_a_work") {
        assert_eq!(e.value["cat"], "dlclosed_lib.c");
    }
}
