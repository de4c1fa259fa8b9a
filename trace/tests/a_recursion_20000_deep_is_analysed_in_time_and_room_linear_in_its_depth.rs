//! A trace of a recursion 20,000 calls deep (a recursive solver traced
//! through `-finstrument-functions` reaches such depths): `profile`, its
//! JSON and Hatchet forms, `critical-path` and `report` finish, without
//! running out of stack, and print in room linear in the depth (a step's
//! stack shows its outermost and innermost names around a count of the
//! rest; deep contexts are indented no further than 32 levels).

mod support;

use support::{path_str, perfflow_trace, scratch, text, write};

const DEPTH: usize = 20_000;

#[test]
fn a_recursion_20000_deep_is_analysed_in_time_and_room_linear_in_its_depth() {
    let dir = scratch("deep_recursion");
    let mut events = Vec::with_capacity(2 * DEPTH);
    for i in 0..DEPTH {
        events.push(format!(
            "{{\"name\":\"f{i}\",\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":{i}}}"
        ));
    }
    for i in (0..DEPTH).rev() {
        events.push(format!(
            "{{\"name\":\"f{i}\",\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":{}}}",
            2 * DEPTH - i
        ));
    }
    let trace = write(&dir, "deep.pfw", &format!("[\n{}\n]\n", events.join(",\n")));
    let t = path_str(&trace);
    let hatchet = dir.join("deep.hatchet.json");
    let report = dir.join("deep.html");
    // The bytes each command may print: a few hundred per context or step.
    for (args, most) in [
        (vec!["profile", t], 300 * DEPTH),
        (vec!["profile", "--json", t], 600 * DEPTH),
        (
            vec![
                "profile",
                "--by-process",
                "--hatchet",
                path_str(&hatchet),
                t,
            ],
            300 * DEPTH,
        ),
        (vec!["critical-path", t], 600 * DEPTH),
        (vec!["report", "-o", path_str(&report), t], 1000),
    ] {
        let done = perfflow_trace(&args);
        assert_eq!(
            done.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&done.stderr)
        );
        assert!(
            done.stdout.len() <= most,
            "{args:?}: {} bytes printed",
            done.stdout.len()
        );
    }
    assert!(std::fs::metadata(&hatchet).unwrap().len() < 1000 * DEPTH as u64);
    assert!(std::fs::metadata(&report).unwrap().len() < 1000 * DEPTH as u64);
    let path = text(&perfflow_trace(&["critical-path", "--csv", t]).stdout);
    let deepest = format!(
        "f0 > f1 > f2 > f3 > … {} more > f{} > ",
        DEPTH - 16,
        DEPTH - 12
    );
    assert!(path.contains(&deepest), "no step shows `{deepest}`");
    let profile = text(&perfflow_trace(&["profile", "--by-process", t]).stdout);
    assert!(
        profile.contains(&format!("[{}] f{}", DEPTH - 1, DEPTH - 1)),
        "{}",
        &profile[..2000]
    );
}
