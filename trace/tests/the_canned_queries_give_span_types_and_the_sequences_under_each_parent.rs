//! `sql DB span-types` and `sql DB event-sequences` on the runtime's
//! `tests/data/nest.json` (`main` calls `outer` twice, each `outer` calls
//! `inner` three times; `worker` on another thread; async `transfer`).

mod support;

use support::*;

#[test]
fn the_canned_queries_give_span_types_and_the_sequences_under_each_parent() {
    let db = scratch("db_canned").join("runs.sqlite");
    import(&db, &[path_str(&data("nest.json"))]);
    let types: Vec<String> = sql(&db, "span-types")
        .iter()
        .map(|row| row.split(',').take(4).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        types,
        [
            "region,inner,6,0",
            "region,outer,2,0",
            "io,transfer,1,0",
            "region,main,1,0",
            "region,worker,1,0"
        ]
    );
    let sequences = sql(&db, "event-sequences");
    assert_eq!(
        sequences,
        ["outer,inner > inner > inner,2", "main,outer > outer,1"]
    );
}
