//! A file that is not a trace, a database that cannot be written, and a
//! query SQLite rejects each fail with a message naming the input; the
//! file that failed leaves nothing behind.

mod support;

use support::*;

#[test]
fn bad_input_to_db_and_sql_is_named_in_the_error() {
    let dir = scratch("db_bad_input");
    let db = dir.join("runs.sqlite");
    let notes = write(&dir, "notes.txt", "shopping: eggs, milk\n");
    let output = perfflow_trace(&["db", "-o", path_str(&db), path_str(&notes)]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains(path_str(&notes)), "{stderr}");
    assert!(stderr.contains("expected `[`"), "{stderr}");
    assert_eq!(
        sql(
            &db,
            "SELECT COUNT(*) FROM run UNION ALL SELECT COUNT(*) FROM source_file"
        ),
        ["0", "0"]
    );

    let unwritable = dir.join("no such dir").join("runs.sqlite");
    let trace = data("nest.json");
    let output = perfflow_trace(&["db", "-o", path_str(&unwritable), path_str(&trace)]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains(path_str(&unwritable)), "{stderr}");
    assert!(stderr.contains("unable to open database file"), "{stderr}");

    let output = perfflow_trace(&["sql", path_str(&db), "SELECT nope FROM span"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("SELECT nope FROM span"), "{stderr}");
    assert!(stderr.contains("no such column: nope"), "{stderr}");

    for blank in ["", "  ", "/* nothing */"] {
        let output = perfflow_trace(&["sql", path_str(&db), blank]);
        assert_eq!(output.status.code(), Some(1));
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains(&format!("query `{blank}` holds no SQL statement")),
            "{stderr}"
        );
    }

    // A second statement is refused rather than left out; a trailing `;`
    // or comment is no statement.
    for (several, said) in [
        ("SELECT 1; SELECT 2", "holds more than one SQL statement"),
        ("SELECT 1; SELECT nope FROM span", "no such column: nope"),
    ] {
        let output = perfflow_trace(&["sql", path_str(&db), several]);
        assert_eq!(output.status.code(), Some(1), "{several}");
        let stderr = text(&output.stderr);
        assert!(stderr.contains(&format!("query `{several}`")), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
        assert!(output.stdout.is_empty(), "{several}");
    }
    for one in ["SELECT 1;", "SELECT 1; -- done", "SELECT 1; ;"] {
        let output = perfflow_trace(&["sql", "--csv", path_str(&db), one]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{one}: {}",
            text(&output.stderr)
        );
        assert_eq!(text(&output.stdout), "1\n1\n", "{one}");
    }

    let missing = dir.join("missing.sqlite");
    let output = perfflow_trace(&["sql", path_str(&missing), "SELECT 1"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains(path_str(&missing)));
}
