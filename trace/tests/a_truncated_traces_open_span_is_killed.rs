//! A trace cut short (the runtime's `nest.json` up to the end of the second
//! `outer`'s first `inner`) imports every complete span; `main` and the
//! second `outer`, begun and never ended in the file, are `killed` (the
//! process died inside them) with no end time. `transfer`'s end, written before its begin, is
//! left out: the begin is past the cut.

mod support;

use support::*;

#[test]
fn a_truncated_traces_open_span_is_killed() {
    let dir = scratch("db_truncated");
    let full = std::fs::read_to_string(data("nest.json")).unwrap();
    let cut = full
        .find("\"ts\":1795473471282515.525")
        .expect("the end of the second outer's first inner");
    // Up to that line, plus half of the next one.
    let end = cut + full[cut..].find('\n').unwrap() + 1 + 30;
    let trace = write(&dir, "cut.pfw", &full[..end]);
    let db = dir.join("runs.sqlite");
    let output = import(&db, &[path_str(&trace)]);
    assert!(text(&output.stdout).contains("cut short"));
    let spans = sql(
        &db,
        "SELECT name, outcome, end_ns IS NULL, COUNT(*) FROM span GROUP BY 1, 2, 3 ORDER BY 1, 2",
    );
    assert_eq!(
        spans,
        [
            "inner,returned,0,4",
            "main,killed,1,1",
            "outer,killed,1,1",
            "outer,returned,0,1",
            "worker,returned,0,1"
        ]
    );
}
