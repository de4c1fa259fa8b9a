//! `perfflow_region_end_unwind` and `perfflow_async_end_unwind`, the
//! manual API's ends for a region or async operation left by an exception
//! (what the Python package calls for regions and coroutines), write the
//! same `E` and `e` as `perfflow_region_end` and `perfflow_async_end`, with
//! `"args":{"outcome":"raised"}`; the async end keeps its operation's id.

mod support;

use support::{command, pfw_files, program, run, Scratch, Trace};

#[test]
fn the_manual_api_s_unwinding_ends_say_raised() {
    let dir = Scratch::new("manual_unwind");
    let done = run(&mut command(
        &program("manual_ends_left_by_an_exception"),
        &dir.path,
    ));
    assert!(done.status.success(), "{}", done.stderr);
    assert!(done.stderr.is_empty(), "{}", done.stderr);
    let ids: Vec<u64> = done
        .printed("ids")
        .expect("ids printed")
        .split(',')
        .map(|i| i.parse().expect("an id"))
        .collect();
    let files = pfw_files(&dir.path);
    assert_eq!(files.len(), 1, "{files:?}");
    let trace = Trace::read(&files[0]);
    let ends: Vec<(&str, &str, Option<u64>, Option<&str>)> = trace
        .body()
        .into_iter()
        .filter(|e| matches!(e.ph(), "E" | "e"))
        .map(|e| {
            (
                e.name(),
                e.ph(),
                e.value["id"].as_u64(),
                e.value["args"]["outcome"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        ends,
        [
            ("load", "E", None, Some("raised")),
            ("load", "E", None, None),
            ("transfer", "e", Some(ids[0]), Some("raised")),
            ("transfer", "e", Some(ids[1]), None),
        ]
    );
}
