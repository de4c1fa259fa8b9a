//! `sql --json` writes each row's columns in the order the query gives
//! them, and a column name the query repeats is kept as `name:2`.

mod support;

use support::*;

#[test]
fn sql_json_keeps_the_column_order_of_the_query() {
    let dir = scratch("sql_json_order");
    let db = dir.join("runs.sqlite");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2);")
        .unwrap();
    drop(conn);
    let output = perfflow_trace(&[
        "sql",
        path_str(&db),
        "SELECT x * 10 AS z, 'q\"' AS a, NULL AS m, 1.5 AS b, x AS a FROM t ORDER BY x",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        "[{\"z\":10,\"a\":\"q\\\"\",\"m\":null,\"b\":1.5,\"a:2\":1},\
         {\"z\":20,\"a\":\"q\\\"\",\"m\":null,\"b\":1.5,\"a:2\":2}]\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
