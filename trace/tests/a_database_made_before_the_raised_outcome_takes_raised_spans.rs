//! A database whose `span.outcome` constraint predates `raised` and
//! `killed` refuses them; importing into it widens the constraint in place,
//! keeps its spans, and takes the new outcomes.

mod support;

use rusqlite::Connection;
use support::*;

const OLD: &str = "CHECK (outcome IN ('returned', 'open_at_end'))";
const NEW: &str = "CHECK (outcome IN ('returned', 'raised', 'open_at_end', 'killed'))";

fn span_table(db: &std::path::Path) -> String {
    let conn = Connection::open(db).unwrap();
    conn.query_row(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'span'",
        [],
        |row| row.get(0),
    )
    .unwrap()
}

#[test]
fn a_database_made_before_the_raised_outcome_takes_raised_spans() {
    let dir = scratch("db_old_outcomes");
    let db = dir.join("runs.sqlite");
    let first = runtime_file(
        &dir,
        "h",
        "app",
        1,
        &[
            event("main", "app.c", "B", 1, 1, 1_000),
            event("main", "app.c", "E", 1, 1, 2_000),
        ]
        .concat(),
    );
    import(&db, &[path_str(&first)]);
    // Made as before: the narrower constraint, which refuses `raised`.
    {
        let conn = Connection::open(&db).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA schema_version", [], |row| row.get(0))
            .unwrap();
        conn.execute_batch("PRAGMA writable_schema = ON;").unwrap();
        conn.execute(
            "UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE name = 'span'",
            [NEW, OLD],
        )
        .unwrap();
        conn.execute_batch(&format!(
            "PRAGMA schema_version = {}; PRAGMA writable_schema = OFF;",
            version + 1
        ))
        .unwrap();
    }
    assert!(span_table(&db).contains(OLD));
    {
        let conn = Connection::open(&db).unwrap();
        let refused = conn.execute("UPDATE span SET outcome = 'raised'", []);
        assert!(refused.is_err(), "the old constraint refuses raised");
    }
    let raising = runtime_file(
        &dir,
        "h",
        "app",
        2,
        &[
            event("main", "app.c", "B", 2, 2, 1_000),
            "{\"name\":\"main\",\"cat\":\"app.c\",\"pid\":2,\"tid\":2,\"ts\":2.000,\"ph\":\"E\",\"args\":{\"outcome\":\"raised\"}},\n".to_string(),
        ]
        .concat(),
    );
    import(&db, &[path_str(&raising)]);
    assert!(span_table(&db).contains(NEW), "{}", span_table(&db));
    let rows = sql(
        &db,
        "SELECT p.pid, s.outcome FROM span s JOIN process p ON p.id = s.process ORDER BY p.pid",
    );
    assert_eq!(rows, ["1,returned", "2,raised"]);
    let check = sql(&db, "PRAGMA integrity_check");
    assert_eq!(check, ["ok"]);
    let _ = std::fs::remove_dir_all(&dir);
}
