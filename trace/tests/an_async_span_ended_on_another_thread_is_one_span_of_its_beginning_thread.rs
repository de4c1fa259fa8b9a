//! In `tests/data/nest.json` the runtime wrote the asynchronous span
//! `transfer`'s end (on the worker thread) before its begin (on the main
//! thread); the database holds it as one span, on the main thread, ending
//! at the end event's time, without a parent.

mod support;

use support::*;

#[test]
fn an_async_span_ended_on_another_thread_is_one_span_of_its_beginning_thread() {
    let db = scratch("db_async").join("runs.sqlite");
    import(&db, &[path_str(&data("nest.json"))]);
    let transfer = sql(
        &db,
        "SELECT t.tid, s.category, s.async_id, s.start_ns, s.end_ns, s.parent IS NULL, s.outcome
         FROM span s JOIN thread t ON t.id = s.thread WHERE s.name = 'transfer'",
    );
    assert_eq!(
        transfer,
        ["14885,io,1,1795473471282910993,1795473471283626606,1,returned"]
    );
}
