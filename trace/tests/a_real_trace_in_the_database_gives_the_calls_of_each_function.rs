//! `tests/data/nest.json`, written by the runtime for `tests/data/nest.c`:
//! `main` calls `outer` twice, each `outer` calls `inner` three times, a
//! worker thread runs `worker`, and one asynchronous span `transfer`.

mod support;

use support::*;

#[test]
fn a_real_trace_in_the_database_gives_the_calls_of_each_function() {
    let db = scratch("db_calls").join("runs.sqlite");
    import(&db, &[path_str(&data("nest.json"))]);
    let calls = sql(
        &db,
        "SELECT name, COUNT(*) FROM span GROUP BY name ORDER BY name",
    );
    assert_eq!(
        calls,
        ["inner,6", "main,1", "outer,2", "transfer,1", "worker,1"]
    );
    let outcomes = sql(&db, "SELECT DISTINCT outcome FROM span");
    assert_eq!(outcomes, ["returned"]);
    let process = sql(&db, "SELECT host, exe, pid FROM process");
    assert_eq!(process, ["vm,nest,14885"]);
}
