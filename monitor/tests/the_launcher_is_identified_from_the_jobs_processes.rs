//! Without `-l`, the monitor names the job's launcher from its processes,
//! as perfmon tries to; `-l` wins.

mod cli_support;

use cli_support::{monitor, run_ok, script};

fn launcher(extra: &[&str]) -> serde_json::Value {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    // A stand-in `mpirun` that starts two ranks and waits for them.
    script(tmp.path(), "mpirun", "sleep 0.3 & sleep 0.3 & wait");
    let mut c = monitor(tmp.path());
    c.args(["-i", "100ms", "-d"])
        .arg(&out)
        .args(["--host-name", "n1"])
        .args(extra)
        .arg("--")
        .arg(tmp.path().join("mpirun"));
    let meta = run_ok(c, &out);
    assert_eq!(meta["n1"]["launcher"], meta["launcher"]);
    meta["launcher"].clone()
}

#[test]
fn a_job_started_by_mpirun_names_mpirun_and_l_overrides_it() {
    assert_eq!(launcher(&[]), "mpirun");
    assert_eq!(launcher(&["-l", "srun"]), "srun");
}
