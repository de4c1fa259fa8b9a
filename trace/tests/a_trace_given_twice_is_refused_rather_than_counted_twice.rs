//! One trace given twice to a command that reads a workflow (by two names,
//! or as a file and within its directory) would count its processes twice:
//! the command stops and names both.

mod support;

use support::{event, path_str, perfflow_trace, runtime_file, scratch, text};

#[test]
fn a_trace_given_twice_is_refused_rather_than_counted_twice() {
    let dir = scratch("given_twice");
    let body = format!(
        "{}{}",
        event("solve", "app.c", "B", 7, 7, 1_000),
        event("solve", "app.c", "E", 7, 7, 2_000)
    );
    let trace = runtime_file(&dir, "node1", "app", 7, &body);
    let other_name = dir.join("copy.pfw");
    std::fs::hard_link(&trace, &other_name).unwrap();
    let out = dir.join("out.pfw");
    let t = path_str(&trace);
    let d = path_str(&dir);
    for args in [
        vec!["merge", t, t, "-o", path_str(&out)],
        vec!["merge", d, path_str(&other_name), "-o", path_str(&out)],
        vec!["profile", t, path_str(&other_name)],
        vec!["critical-path", t, d],
    ] {
        let done = perfflow_trace(&args);
        let stderr = text(&done.stderr);
        assert_eq!(done.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("are one file; expected each trace once"),
            "{args:?}: {stderr}"
        );
        assert!(!out.exists(), "{args:?}");
    }
}

/// A directory that holds a trace and its conversion (`X.pfw` and
/// `X.pftrace`) holds one trace twice: read as a directory it is refused,
/// naming both; each file named on its own still reads.
#[test]
fn a_directory_with_a_trace_in_both_formats_is_refused() {
    let dir = scratch("two_formats");
    let body = format!(
        "{}{}",
        event("solve", "app.c", "B", 7, 7, 1_000),
        event("solve", "app.c", "E", 7, 7, 2_000)
    );
    let trace = runtime_file(&dir, "node1", "app", 7, &body);
    let converted = trace.with_extension("pftrace");
    let done = perfflow_trace(&["convert", path_str(&trace), path_str(&converted)]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    let out = dir.join("out").join("merged.pfw");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let d = path_str(&dir);
    for args in [
        vec!["merge", d, "-o", path_str(&out)],
        vec!["profile", d],
        vec!["critical-path", d],
        vec!["compare", d, d],
    ] {
        let done = perfflow_trace(&args);
        let stderr = text(&done.stderr);
        assert_eq!(done.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("are one trace in two formats"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(path_str(&converted)), "{args:?}: {stderr}");
    }
    assert!(!out.exists());
    let done = perfflow_trace(&["profile", path_str(&converted)]);
    assert!(done.status.success(), "{}", text(&done.stderr));
}
