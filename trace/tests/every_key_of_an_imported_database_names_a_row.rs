//! The importer keeps the database's foreign keys itself (SQLite does not
//! check them during the import): after importing traces with nested
//! spans, flows between processes, instants and counters, into a new
//! database and then into one that has rows, no key points nowhere.

mod support;

use support::*;

#[test]
fn every_key_of_an_imported_database_names_a_row() {
    let dir = scratch("db_keys");
    let db = dir.join("runs.sqlite");
    import(&db, &[path_str(&data("nest.json"))]);
    assert_eq!(sql(&db, "PRAGMA foreign_key_check"), Vec::<String>::new());
    let monitor = monitor_file(&dir);
    import(
        &db,
        &[
            path_str(&data("queue.produce.json")),
            path_str(&data("queue.consume.json")),
            path_str(&monitor),
        ],
    );
    assert_eq!(sql(&db, "PRAGMA foreign_key_check"), Vec::<String>::new());
    // The rows are there to check: spans with parents, paired flows.
    assert_eq!(
        sql(
            &db,
            "SELECT COUNT(*) > 0 FROM span WHERE parent IS NOT NULL
             UNION ALL SELECT COUNT(*) > 0 FROM flow WHERE from_span IS NOT NULL AND to_span IS NOT NULL
             UNION ALL SELECT COUNT(*) > 0 FROM counter"
        ),
        ["1", "1", "1"]
    );
}
