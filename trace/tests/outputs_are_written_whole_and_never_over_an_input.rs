//! Files the tool writes never cost the user a file: an output that is an
//! input (by another name, or a hard link) is refused by every command that
//! writes one, and a command that fails half way leaves the file that was
//! at its output as it was, with no partial or temporary file beside it.
//! `merge` writes a Perfetto trace when the output's name asks for one.

mod support;

use std::path::{Path, PathBuf};

use support::{event, names_in, path_str, perfflow_trace, runtime_file, scratch, text, write};

/// A runtime trace of process `pid` on `host` holding one slice.
fn one_slice(dir: &Path, host: &str, pid: u32, name: &str, begin_ns: u64) -> PathBuf {
    let body = format!(
        "{}{}",
        event(name, "app.c", "B", pid, pid, begin_ns),
        event(name, "app.c", "E", pid, pid, begin_ns + 1_000)
    );
    runtime_file(dir, host, "app", pid, &body)
}

fn trace(dir: &Path) -> PathBuf {
    one_slice(dir, "node1", 7, "solve", 1_000)
}

/// A trace whose second event is invalid: reading it fails after the
/// first one was taken.
fn invalid(dir: &Path) -> PathBuf {
    write(
        dir,
        "perfflow.array.node2.8.pfw",
        "[\n{\"name\":\"f\",\"ph\":\"B\",\"pid\":8,\"tid\":8,\"ts\":1},\n\
         {\"name\":\"f\",\"ph\":\"E\",\"pid\":8,\"tid\":8,\"ts\":NaN}\n]\n",
    )
}

#[test]
fn an_input_named_as_the_output_is_refused_and_kept() {
    let dir = scratch("output_is_input");
    let input = trace(&dir);
    let before = std::fs::read(&input).unwrap();
    let hard_link = dir.join("link.pfw");
    std::fs::hard_link(&input, &hard_link).unwrap();
    let i = path_str(&input);
    let link = path_str(&hard_link);
    for args in [
        vec!["convert", i, link],
        vec!["merge", i, "-o", link],
        vec!["report", "-o", i, i],
        vec!["profile", "--hatchet", i, i],
        vec!["critical-path", "-o", link, i],
    ] {
        let done = perfflow_trace(&args);
        let stderr = text(&done.stderr);
        assert_eq!(done.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("and the output; expected another"),
            "{args:?}: {stderr}"
        );
        assert_eq!(std::fs::read(&input).unwrap(), before, "{args:?}");
    }
    assert_eq!(names_in(&dir), ["link.pfw", "perfflow.array.node1.7.pfw"]);
}

#[test]
fn a_failed_merge_or_convert_leaves_the_old_output_and_nothing_else() {
    let dir = scratch("failed_output");
    let good = trace(&dir);
    let bad = invalid(&dir);
    let out = dir.join("out.pfw");
    let out_pf = dir.join("out.pftrace");
    for args in [
        vec![
            "merge",
            path_str(&good),
            path_str(&bad),
            "-o",
            path_str(&out),
        ],
        vec!["convert", path_str(&bad), path_str(&out)],
        vec!["convert", path_str(&bad), path_str(&out_pf)],
        vec![
            "merge",
            path_str(&good),
            path_str(&bad),
            "-o",
            path_str(&out_pf),
        ],
    ] {
        std::fs::write(&out, "precious").unwrap();
        std::fs::write(&out_pf, "precious").unwrap();
        let done = perfflow_trace(&args);
        assert_eq!(
            done.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&done.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "precious",
            "{args:?}"
        );
        assert_eq!(
            std::fs::read_to_string(&out_pf).unwrap(),
            "precious",
            "{args:?}"
        );
        assert_eq!(
            names_in(&dir),
            [
                "out.pftrace",
                "out.pfw",
                "perfflow.array.node1.7.pfw",
                "perfflow.array.node2.8.pfw"
            ],
            "{args:?}"
        );
    }
}

#[test]
fn merge_writes_a_pftrace_when_the_output_is_named_so() {
    let dir = scratch("merge_to_pftrace");
    let a = trace(&dir);
    let b = one_slice(&dir, "node2", 9, "load", 2_000);
    let merged = dir.join("merged.pftrace");
    let done = perfflow_trace(&["merge", path_str(&a), path_str(&b), "-o", path_str(&merged)]);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let checked = perfflow_trace(&["check", "--expect-events", "4", path_str(&merged)]);
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}{}",
        text(&checked.stdout),
        text(&checked.stderr)
    );
    assert_eq!(
        names_in(&dir),
        [
            "merged.pftrace",
            "perfflow.array.node1.7.pfw",
            "perfflow.array.node2.9.pfw"
        ]
    );
    let refused = perfflow_trace(&[
        "critical-path",
        "-o",
        path_str(&dir.join("cp.pftrace")),
        path_str(&a),
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("Chrome JSON"),
        "{}",
        text(&refused.stderr)
    );
}
