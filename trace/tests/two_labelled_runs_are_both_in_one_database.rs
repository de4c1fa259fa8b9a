//! Two `db` commands with `--run` and `--label` add two runs to one
//! database, each with its labels, processes and spans.

mod support;

use support::*;

#[test]
fn two_labelled_runs_are_both_in_one_database() {
    let db = scratch("db_runs").join("runs.sqlite");
    import(
        &db,
        &[
            "--run",
            "baseline",
            "--label",
            "nodes=1",
            "--label",
            "compiler=clang",
            path_str(&data("queue.produce.json")),
        ],
    );
    import(
        &db,
        &[
            path_str(&data("nest.json")),
            "--run=tuned",
            "--label=nodes=2",
        ],
    );
    let runs = sql(
        &db,
        "SELECT r.name, l.key, l.value FROM run r JOIN run_label l ON l.run = r.id
         ORDER BY r.id, l.key",
    );
    assert_eq!(
        runs,
        [
            "baseline,compiler,clang",
            "baseline,nodes,1",
            "tuned,nodes,2"
        ]
    );
    let spans = sql(
        &db,
        "SELECT r.name, r.host_count, COUNT(*) FROM span s JOIN process p ON p.id = s.process
         JOIN run r ON r.id = p.run GROUP BY r.id ORDER BY r.id",
    );
    assert_eq!(spans, ["baseline,1,5", "tuned,1,11"]);
}
