//! `PERFFLOW_FLOW_PREFIX=<tag>` makes a process number and link its flows of
//! scope `S` as flows of `<tag>/S`, so copies of one program started with
//! different tags link to different departures of a driver. Runs
//! `tests/c/flows.c` (three flows on scope `queue`, three on `relay`).

mod support;

use perfflow_runtime::decode::flow_id;
use support::{command, pfw_files, program, run, Scratch, Trace};

/// The ids of the flow events of phase `ph` named `scope`, in file order.
fn flow_ids(trace: &Trace, ph: &str, scope: &str) -> Vec<u64> {
    trace
        .events
        .iter()
        .filter(|e| e.value["cat"] == "flow" && e.value["ph"] == ph && e.value["name"] == scope)
        .map(|e| e.value["id"].as_u64().expect("flow id"))
        .collect()
}

fn flows_with(prefix: Option<&str>) -> Trace {
    let dir = Scratch::new(&format!("flow-prefix-{}", prefix.unwrap_or("none")));
    let mut cmd = command(&program("flows"), &dir.path);
    if let Some(prefix) = prefix {
        cmd.env("PERFFLOW_FLOW_PREFIX", prefix);
    }
    let done = run(&mut cmd);
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let files = pfw_files(&dir.path);
    assert_eq!(files.len(), 1, "{files:?}");
    Trace::read(&files[0])
}

#[test]
fn flows_are_numbered_on_the_prefixed_scope() {
    let ids = |scope: &[u8]| (0..3).map(|k| flow_id(scope, k)).collect::<Vec<_>>();
    let plain = flows_with(None);
    assert_eq!(flow_ids(&plain, "s", "queue"), ids(b"queue"));
    assert_eq!(flow_ids(&plain, "f", "queue"), ids(b"queue"));

    let tagged = flows_with(Some("task7"));
    // Events keep the scope as their name; the ids are those of task7/<scope>.
    assert_eq!(flow_ids(&tagged, "s", "queue"), ids(b"task7/queue"));
    assert_eq!(flow_ids(&tagged, "f", "queue"), ids(b"task7/queue"));
    assert_eq!(flow_ids(&tagged, "s", "relay"), ids(b"task7/relay"));
    assert_eq!(flow_ids(&tagged, "f", "relay"), ids(b"task7/relay"));
}
