//! A `B` closed by an `E` of another name is no span (as in `check` and
//! `summary`): the span, instant and flow inside it, written before the
//! mismatch was seen, keep no reference to it, and every key of the
//! database names a row.

mod support;

use support::*;

#[test]
fn a_begin_closed_by_an_end_of_another_name_is_no_parent_in_the_database() {
    let dir = scratch("db_wrong_name");
    let body = [
        event("main", "app", "B", 7, 7, 1_000),
        event("outer", "app", "B", 7, 7, 2_000),
        event("inner", "app", "B", 7, 7, 3_000),
        event("inner", "app", "E", 7, 7, 4_000),
        event("mark", "app", "i", 7, 7, 5_000),
        flow("send", "s", 7, 7, 6_000, 1),
        event("misnamed", "app", "E", 7, 7, 7_000),
        flow("send", "f", 7, 7, 7_500, 1),
        event("main", "app", "E", 7, 7, 8_000),
    ]
    .concat();
    let trace = runtime_file(&dir, "n1", "app", 7, &body);
    let db = dir.join("runs.sqlite");
    import(&db, &[path_str(&trace)]);
    assert_eq!(
        sql(
            &db,
            "SELECT s.name, s.depth, p.name FROM span s LEFT JOIN span p ON p.id = s.parent
             ORDER BY s.start_ns"
        ),
        ["main,0,", "inner,2,"]
    );
    assert_eq!(sql(&db, "SELECT name, span FROM instant"), ["mark,"]);
    assert_eq!(
        sql(
            &db,
            "SELECT from_span, p.name FROM flow LEFT JOIN span p ON p.id = to_span"
        ),
        [",main"]
    );
    assert_eq!(sql(&db, "PRAGMA foreign_key_check"), Vec::<String>::new());
}
