//! Two databases that both hold a run of one name (the default `run-1`,
//! say) would write its rows into the same partitions, with span ids that
//! collide: `export` refuses them, naming both, and writes nothing.

mod support;

use support::*;

#[test]
fn export_refuses_two_databases_with_a_run_of_one_name() {
    let dir = scratch("export_same_run");
    let trace = write(
        &dir,
        "perfflow.array.h.1.pfw",
        "[\n{\"name\":\"f\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5}\n]\n",
    );
    let first = dir.join("first.sqlite");
    let second = dir.join("second.sqlite");
    import(&first, &["--run", "run-1", path_str(&trace)]);
    import(&second, &["--run", "run-1", path_str(&trace)]);
    let out = dir.join("parquet");
    let done = perfflow_trace(&[
        "export",
        "--parquet",
        path_str(&out),
        path_str(&first),
        path_str(&second),
    ]);
    assert_eq!(done.status.code(), Some(1), "{}", text(&done.stderr));
    let stderr = text(&done.stderr);
    assert!(
        stderr.contains(path_str(&first)) && stderr.contains(path_str(&second)),
        "{stderr}"
    );
    assert!(stderr.contains("both hold a run named run-1"), "{stderr}");

    let third = dir.join("third.sqlite");
    import(&third, &["--run", "run-2", path_str(&trace)]);
    let out = dir.join("parquet-2");
    let done = perfflow_trace(&[
        "export",
        "--parquet",
        path_str(&out),
        path_str(&first),
        path_str(&third),
    ]);
    assert!(done.status.success(), "{}", text(&done.stderr));
}
