//! Importing a file already in the database, in the same or another run,
//! adds no row anywhere and says the file was skipped.

mod support;

use support::*;

const TABLES: &str = "SELECT (SELECT COUNT(*) FROM run), (SELECT COUNT(*) FROM run_label),
    (SELECT COUNT(*) FROM source_file), (SELECT COUNT(*) FROM process),
    (SELECT COUNT(*) FROM thread), (SELECT COUNT(*) FROM span), (SELECT COUNT(*) FROM instant),
    (SELECT COUNT(*) FROM flow), (SELECT COUNT(*) FROM counter)";

#[test]
fn importing_the_same_trace_twice_changes_nothing() {
    let dir = scratch("db_twice");
    let db = dir.join("runs.sqlite");
    let produce = data("queue.produce.json");
    let consume = data("queue.consume.json");
    import(&db, &[path_str(&produce), path_str(&consume)]);
    let before = sql(&db, TABLES);
    assert_eq!(before, ["1,0,2,2,2,10,0,5,0"]);

    let output = import(&db, &[path_str(&produce), path_str(&consume)]);
    assert!(text(&output.stderr).contains("already imported"));
    // A copy under another name, into another run, is the same file.
    let copy = dir.join("copy.pfw");
    std::fs::copy(&produce, &copy).unwrap();
    let output = import(&db, &["--run", "again", "--label", "k=v", path_str(&copy)]);
    assert!(
        text(&output.stderr).contains("skipped"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(sql(&db, TABLES), before);
}
