//! Every row `db` writes for a set of known traces, compared with the rows
//! kept in `tests/data/known_traces.db.txt`: a change to the importer that
//! alters any table (a span's parent, depth or outcome, a flow's ends, a
//! counter sample, the schema) shows here as a differing line.
//!
//! The traces: the runtime's own `nest` and `queue` traces, and a file
//! made here with what those lack (`X` spans, instants inside a span,
//! counters of several series, a `B` closed by an `E` of another name,
//! escaped names, labels, thread names, a cut-off end, a run of calls).
//! They are imported
//! into a new database, then another file is appended to it.
//!
//! When the importer changes on purpose, the test writes the rows it
//! found next to the database it made and names that file.

mod support;

use std::path::Path;

use support::*;

/// Every table of the schema, its columns in order, rows by row id.
const TABLES: &[(&str, &str)] = &[
    ("run", "SELECT * FROM run ORDER BY id"),
    ("run_label", "SELECT * FROM run_label ORDER BY run, key"),
    ("source_file", "SELECT * FROM source_file ORDER BY id"),
    ("process", "SELECT * FROM process ORDER BY id"),
    ("thread", "SELECT * FROM thread ORDER BY id"),
    ("span", "SELECT * FROM span ORDER BY id"),
    ("instant", "SELECT * FROM instant ORDER BY id"),
    ("flow", "SELECT * FROM flow ORDER BY id"),
    ("counter", "SELECT rowid, * FROM counter ORDER BY rowid"),
    ("metric", "SELECT rowid, * FROM metric ORDER BY rowid"),
    (
        "schema",
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name",
    ),
];

/// A trace with what the runtime's test traces lack; `cut` leaves off its
/// closing, as a process killed while writing does.
fn extras(dir: &Path, pid: u32, cut: bool) -> std::path::PathBuf {
    let x = |name: &str, ts: u64, dur: u64| {
        format!(
            "{{\"name\":\"{name}\",\"cat\":\"app\",\"pid\":{pid},\"tid\":{},\"ts\":{}.{:03},\"dur\":{}.{:03},\"ph\":\"X\"}},\n",
            pid + 1,
            ts / 1000,
            ts % 1000,
            dur / 1000,
            dur % 1000
        )
    };
    let opening = format!(
        "[\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{pid},\"args\":{{\"name\":\"app\"}}}},\n\
         {{\"name\":\"perfflow_process\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{pid},\
         \"args\":{{\"host\":\"n{pid}\",\"exe\":\"app\",\"rank\":3,\"command\":[\"app\",\"-n\",\"2\"],\
         \"labels\":{{\"fs\":\"shm\",\"size\":2}}}}}},\n\
         {{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"args\":{{\"name\":\"worker \\\"1\\\"\"}}}},\n",
        pid + 1
    );
    let mut body = opening;
    body += &event("main", "app", "B", pid, pid, 1_000);
    body += &event("mark", "app", "i", pid, pid, 1_500);
    body += &event("outer", "app", "B", pid, pid, 2_000);
    body += &event("in\\\"ner\\u00e9", "app", "B", pid, pid, 3_000);
    body += &event("in\\\"ner\\u00e9", "app", "E", pid, pid, 4_000);
    body += &flow("send", "s", pid, pid, 4_500, 9);
    body += &event("misnamed", "app", "E", pid, pid, 5_000);
    body += &x("load", 1_200, 800);
    body += &x("parse", 1_300, 100);
    body += &x("solve", 2_100, 1_900);
    body += &format!(
        "{{\"name\":\"memory\",\"ph\":\"C\",\"pid\":{pid},\"tid\":{pid},\"ts\":6.000,\"args\":{{\"rss\":1024,\"heap\":512.5,\"name\":\"x\"}}}},\n"
    );
    body += &format!(
        "{{\"name\":\"copy\",\"cat\":\"io\",\"ph\":\"b\",\"pid\":{pid},\"tid\":{pid},\"ts\":6.500,\"id\":\"0x7\"}},\n\
         {{\"name\":\"copy\",\"cat\":\"io\",\"ph\":\"n\",\"pid\":{pid},\"tid\":{pid},\"ts\":6.600,\"id\":\"0x7\"}},\n\
         {{\"name\":\"copy\",\"cat\":\"io\",\"ph\":\"e\",\"pid\":{pid},\"tid\":{},\"ts\":6.900,\"id\":\"0x7\"}},\n",
        pid + 1
    );
    body += &flow("send", "f", pid, pid + 1, 7_000, 9);
    // A run of calls, as a loop makes.
    for k in 0..70 {
        body += &event("step", "app", "B", pid, pid, 7_100 + 10 * k);
        body += &event("step", "app", "E", pid, pid, 7_105 + 10 * k);
    }
    body += &event("main", "app", "E", pid, pid, 8_000);
    body += &event("late", "app", "B", pid, pid + 1, 9_000);
    if !cut {
        body += &closing(pid);
    }
    write(dir, &format!("perfflow.array.n{pid}.{pid}.pfw"), &body)
}

/// The rows of every table of `db`, as CSV under a line naming the table,
/// with `dir` (which the paths of the imported files start with) as `DIR`.
fn dump(db: &Path, dir: &Path) -> String {
    let mut text = String::new();
    for (table, query) in TABLES {
        text += &format!("# {table}\n");
        for row in sql(db, query) {
            text += &row.replace(path_str(dir), "DIR");
            text += "\n";
        }
    }
    text
}

#[test]
fn known_traces_import_into_the_same_rows_as_before() {
    let dir = scratch("db_known_rows");
    let traces = dir.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    for name in ["nest.json", "queue.produce.json", "queue.consume.json"] {
        std::fs::copy(data(name), traces.join(name)).unwrap();
    }
    let extra = extras(&traces, 40, false);
    let db = dir.join("runs.sqlite");
    import(
        &db,
        &[
            "--run",
            "first",
            "--label",
            "size=4",
            path_str(&traces.join("nest.json")),
            path_str(&traces.join("queue.produce.json")),
            path_str(&traces.join("queue.consume.json")),
            path_str(&extra),
        ],
    );
    // Appended to a database that has spans, in another run.
    let appended = extras(&traces, 50, true);
    import(&db, &["--run", "second", path_str(&appended)]);

    let found = dump(&db, &dir);
    let expected = std::fs::read_to_string(data("known_traces.db.txt")).unwrap();
    if found != expected {
        let written = dir.join("known_traces.db.txt");
        std::fs::write(&written, &found).unwrap();
        panic!(
            "the rows differ from tests/data/known_traces.db.txt; found: {}",
            written.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
