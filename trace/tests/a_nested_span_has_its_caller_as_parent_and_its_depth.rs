//! Spans of `tests/data/nest.json` (`main` > `outer` > `inner`, written by
//! the runtime) name their enclosing span as parent, with their depth.

mod support;

use support::*;

#[test]
fn a_nested_span_has_its_caller_as_parent_and_its_depth() {
    let db = scratch("db_parent").join("runs.sqlite");
    import(&db, &[path_str(&data("nest.json"))]);
    let parents = sql(
        &db,
        "SELECT s.name, s.depth, p.name, COUNT(*) FROM span s LEFT JOIN span p ON p.id = s.parent
         WHERE s.category = 'region' GROUP BY 1, 2, 3 ORDER BY 2, 1",
    );
    assert_eq!(
        parents,
        [
            "main,0,,1",
            "worker,0,,1",
            "outer,1,main,2",
            "inner,2,outer,6"
        ]
    );
    // Each outer holds exactly its own three inner calls, inside its time.
    let per_outer = sql(
        &db,
        "SELECT COUNT(*) FROM span o JOIN span i ON i.parent = o.id
         WHERE o.name = 'outer' AND i.start_ns >= o.start_ns AND i.end_ns <= o.end_ns
         GROUP BY o.id",
    );
    assert_eq!(per_outer, ["3", "3"]);
}
