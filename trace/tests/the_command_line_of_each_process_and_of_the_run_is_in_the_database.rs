//! The command line the runtime records in `perfflow_process` lands in
//! `process.command` (the words as a JSON array) and, for the run, the
//! command of its first process that has one; a database made before the
//! column existed gets it on the next import.

mod support;

use support::*;

fn traced(dir: &std::path::Path, host: &str, pid: u32, command: &str) {
    let opening = format!(
        "[\n{{\"name\":\"perfflow_process\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{pid},\
         \"args\":{{\"host\":\"{host}\",\"exe\":\"app\",\"command\":{command}}}}},\n"
    );
    let body = event("main", "app.c", "X", pid, pid, 1_000_000);
    write(
        dir,
        &format!("perfflow.array.{host}.{pid}.pfw"),
        &format!(
            "{opening}{}{}",
            body.replace("\"ph\":\"X\"", "\"ph\":\"X\",\"dur\":1.0"),
            closing(pid)
        ),
    );
}

#[test]
fn the_command_line_of_each_process_and_of_the_run_is_in_the_database() {
    let dir = scratch("db_command");
    let traces = dir.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    traced(&traces, "alpha", 10, r#"["./app","-n","4","a b"]"#);
    traced(&traces, "beta", 20, r#"["./app","-n","4","a b"]"#);

    // A database whose tables predate the command columns.
    let db = dir.join("runs.sqlite");
    let old = rusqlite::Connection::open(&db).unwrap();
    old.execute_batch(
        "CREATE TABLE run (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
             start_ns INTEGER, end_ns INTEGER, host_count INTEGER NOT NULL DEFAULT 0);
         CREATE TABLE process (id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES run(id),
             file INTEGER NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, rank INTEGER,
             exe TEXT NOT NULL, monitor INTEGER NOT NULL DEFAULT 0);",
    )
    .unwrap();
    drop(old);

    import(&db, &["--run", "r", path_str(&traces)]);
    assert_eq!(
        sql(&db, "SELECT host, command FROM process ORDER BY host"),
        [
            r#"alpha,"[""./app"",""-n"",""4"",""a b""]""#,
            r#"beta,"[""./app"",""-n"",""4"",""a b""]""#
        ]
    );
    assert_eq!(
        sql(
            &db,
            "SELECT json_extract(command, '$[3]') FROM run WHERE name = 'r'"
        ),
        ["a b"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
