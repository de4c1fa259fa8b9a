//! The monitor's counter trace of a node (`perfflow.monitor.<host>.<pid>.pfw`),
//! imported beside an application on the same host with the same pid,
//! gives a process of its own, marked as the monitor, holding its samples
//! in `counter`.

mod support;

use support::*;

#[test]
fn monitor_counters_are_imported_under_their_host() {
    let dir = scratch("db_monitor");
    let app = event("main", "app.c", "B", 300, 300, 2_000_000)
        + &event("main", "app.c", "E", 300, 300, 2_000_500);
    runtime_file(&dir, "beta", "app", 300, &app);
    monitor_file(&dir);
    let db = dir.join("runs.sqlite");
    import(&db, &[path_str(&dir)]);
    let processes = sql(
        &db,
        "SELECT host, exe, pid, monitor FROM process ORDER BY monitor",
    );
    assert_eq!(processes, ["beta,app,300,0", "beta,perfflow-monitor,300,1"]);
    let counters = sql(
        &db,
        "SELECT p.host, p.monitor, c.track, c.series, c.ts_ns, c.value
         FROM counter c JOIN process p ON p.id = c.process ORDER BY c.track",
    );
    assert_eq!(
        counters,
        [
            "beta,1,cpu total (%),value,2000100000,37.5",
            "beta,1,mem used (bytes),value,2000100000,1048576.0"
        ]
    );
    assert_eq!(sql(&db, "SELECT host_count FROM run"), ["1"]);
}
