//! `check` and `summary` read a directory as every command does: the
//! `perfflow.*.pfw` and `perfflow.*.pftrace` files in it.

mod support;

use support::*;

#[test]
fn check_and_summary_read_a_directory_as_its_traces() {
    let dir = scratch("dir_as_traces");
    let run = dir.join("run");
    std::fs::create_dir_all(&run).expect("dir");
    for pid in [1, 2] {
        write(
            &run,
            &format!("perfflow.array.h.{pid}.pfw"),
            &format!(
                "[\n{{\"name\":\"work\",\"ph\":\"X\",\"pid\":{pid},\"tid\":{pid},\"ts\":0,\"dur\":5}}\n]\n"
            ),
        );
    }
    write(&run, "notes.txt", "not a trace\n");
    let checked = perfflow_trace(&["check", path_str(&run)]);
    assert!(checked.status.success(), "{}", text(&checked.stderr));
    let shown = text(&checked.stdout);
    assert_eq!(shown.matches(": ok").count(), 2, "{shown}");
    let summed = perfflow_trace(&["summary", "--csv", path_str(&run)]);
    assert!(summed.status.success(), "{}", text(&summed.stderr));
    assert!(
        text(&summed.stdout).contains("work,2,"),
        "{}",
        text(&summed.stdout)
    );
}
