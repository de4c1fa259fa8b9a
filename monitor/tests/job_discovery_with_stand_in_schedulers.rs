//! Finding the job under each scheduler, with stand-in `scontrol` and
//! `flux` commands (shell scripts first on `PATH` that print what the real
//! commands document) and real `sleep` processes as the job.

mod cli_support;

use cli_support::{metrics, monitor, path_with, read_json, run, run_ok, script};
use perfflow_monitor::cli::job::cgroup_pids;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

fn sleeper_with_env(seconds: f64, env: &[(&str, &str)]) -> Child {
    let mut c = Command::new("sleep");
    c.arg(seconds.to_string()).stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().expect("start sleep")
}

fn followed(meta_dir: &std::path::Path, host: &str) -> Vec<String> {
    let cpu = read_json(&meta_dir.join("cpu_metrics.json"));
    cpu[host]["child_proc_md"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn reap(children: Vec<Child>) {
    for mut c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
}

#[test]
fn under_slurm_the_work_steps_from_scontrol_listpids_are_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let listing = tmp.path().join("listpids.txt");
    script(
        &bin,
        "scontrol",
        &format!(
            "[ \"$1\" = listpids ] && [ \"$2\" = 77 ] || exit 1\ncat {}",
            listing.display()
        ),
    );
    let header = "PID      JOBID    STEPID   LOCALID GLOBALID\n";
    std::fs::write(&listing, header).unwrap();
    let batch = cli_support::sleeper(60.0);
    let own = cli_support::sleeper(60.0);

    let mut c = monitor(tmp.path());
    c.env("PATH", path_with(&bin))
        .env("SLURM_JOB_ID", "77")
        .env("SLURM_STEP_ID", "5")
        .args(["-i", "100ms", "--host-name", "s1", "-d", "out"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mon = c.spawn().unwrap();
    // The job's step starts after the monitor.
    std::thread::sleep(Duration::from_millis(500));
    let work = cli_support::sleeper(1.5);
    std::fs::write(
        &listing,
        format!(
            "{header}{} 77 0 0 0\n{} 77 batch - -\n{} 77 5 0 0\n",
            work.id(),
            batch.id(),
            own.id()
        ),
    )
    .unwrap();
    let started = Instant::now();
    let out = cli_support::wait_output(mon, LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    let m = metrics(&tmp.path().join("out"));
    let meta = read_json(&m.join("meta_data.json"));
    assert_eq!(meta["job_id"], "77");
    assert_eq!(meta["scheduler"], "slurm");
    let procs = followed(&m, "s1");
    assert!(
        procs.contains(&format!("sleep ({})", work.id())),
        "{procs:?}"
    );
    assert!(
        !procs.iter().any(|p| p.contains(&batch.id().to_string())),
        "{procs:?}"
    );
    assert!(
        !procs.iter().any(|p| p.contains(&own.id().to_string())),
        "{procs:?}"
    );
    reap(vec![work, batch, own]);
}

#[test]
fn without_scontrol_the_steps_cgroups_give_the_pids() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("system.slice/slurmstepd.scope/job_77");
    let put = |rel: &str, text: &str| {
        let d = job.join(rel);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cgroup.procs"), text).unwrap();
    };
    put("step_0/user/task_0", "101\n102\n");
    put("step_1/user/task_0", "111\n");
    put("step_5/user/task_0", "201\n");
    put("step_batch", "301\n");
    put("step_extern", "401\n");
    let mut pids = cgroup_pids(tmp.path(), "77", Some("5"));
    pids.sort();
    assert_eq!(pids, vec![101, 102, 111]);
    assert!(cgroup_pids(tmp.path(), "78", None).is_empty());
}

#[test]
fn under_pbs_processes_carrying_the_job_id_are_followed_and_the_nodefile_read() {
    let tmp = tempfile::tempdir().unwrap();
    let id = format!("{}.pbs-test", std::process::id());
    let nodefile = tmp.path().join("nodefile");
    std::fs::write(&nodefile, "nodeA\nnodeA\nnodeB\n").unwrap();
    let work = sleeper_with_env(1.5, &[("PBS_JOBID", &id)]);
    let other = sleeper_with_env(60.0, &[("PBS_JOBID", "999.other")]);
    let mut c = monitor(tmp.path());
    c.env("PBS_JOBID", &id)
        .env("PBS_NODEFILE_LOCAL", &nodefile)
        .args(["-i", "100ms", "--host-name", "nodeA", "-d", "out"]);
    let meta = run_ok(c, &tmp.path().join("out"));
    let m = metrics(&tmp.path().join("out"));
    assert_eq!(meta["scheduler"], "pbs");
    assert_eq!(meta["job_id"], id.as_str());
    assert_eq!(meta["node_list"], serde_json::json!(["nodeA", "nodeB"]));
    let procs = followed(&m, "nodeA");
    assert!(
        procs.contains(&format!("sleep ({})", work.id())),
        "{procs:?}"
    );
    assert!(!procs.iter().any(|p| p.contains(&other.id().to_string())));
    reap(vec![work, other]);
}

#[test]
fn under_oar_processes_carrying_the_job_id_are_followed_and_the_nodefile_read() {
    let tmp = tempfile::tempdir().unwrap();
    let id = format!("{}", 500_000 + std::process::id());
    let nodefile = tmp.path().join("oarnodes");
    std::fs::write(&nodefile, "o1\no2\no2\n").unwrap();
    let work = sleeper_with_env(1.5, &[("OAR_JOB_ID", &id)]);
    let mut c = monitor(tmp.path());
    c.env("OAR_JOB_ID", &id)
        .env("OAR_NODEFILE", &nodefile)
        .args(["-i", "100ms", "--host-name", "o1", "-d", "out"]);
    let meta = run_ok(c, &tmp.path().join("out"));
    let m = metrics(&tmp.path().join("out"));
    assert_eq!(meta["scheduler"], "oar");
    assert_eq!(meta["node_list"], serde_json::json!(["o1", "o2"]));
    assert!(followed(&m, "o1").contains(&format!("sleep ({})", work.id())));
    reap(vec![work]);
}

#[test]
fn under_flux_the_other_running_jobs_of_the_instance_are_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    script(
        &bin,
        "flux",
        "case \"$1\" in\n getattr) [ \"$2\" = jobid ] && echo fBATCH1 ;;\n jobs) echo fAPP1 ;;\n *) exit 1 ;;\nesac",
    );
    let uri = format!("local:///tmp/flux-test-{}", std::process::id());
    let work = sleeper_with_env(1.5, &[("FLUX_JOB_ID", "fAPP1"), ("FLUX_URI", &uri)]);
    let done = sleeper_with_env(60.0, &[("FLUX_JOB_ID", "fOLD"), ("FLUX_URI", &uri)]);
    let mut c = monitor(tmp.path());
    c.env("PATH", path_with(&bin))
        .env("FLUX_JOB_ID", "fMON1")
        .env("FLUX_URI", &uri)
        .args(["-i", "100ms", "--host-name", "f1", "-d", "out"]);
    let meta = run_ok(c, &tmp.path().join("out"));
    let m = metrics(&tmp.path().join("out"));
    assert_eq!(meta["scheduler"], "flux");
    assert_eq!(meta["job_id"], "fBATCH1");
    let procs = followed(&m, "f1");
    assert!(
        procs.contains(&format!("sleep ({})", work.id())),
        "{procs:?}"
    );
    assert!(!procs.iter().any(|p| p.contains(&done.id().to_string())));
    reap(vec![work, done]);
}

#[test]
fn a_tree_of_real_children_is_followed_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = monitor(tmp.path());
    c.args([
        "-i",
        "100ms",
        "--host-name",
        "t1",
        "-d",
        "out",
        "--",
        "sh",
        "-c",
        "sleep 1 & sleep 1 & sh -c 'sleep 1' & wait",
    ]);
    let out = run(c, LIMIT);
    assert_eq!(out.status.code(), Some(0));
    let m = metrics(&tmp.path().join("out"));
    let cpu = read_json(&m.join("cpu_metrics.json"));
    let most = cpu["t1"]["num_procs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_f64())
        .fold(0.0, f64::max);
    assert!(most >= 5.0, "at most {most} processes seen");
}

#[test]
fn a_job_that_never_starts_ends_with_finished_and_empty_results() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    script(
        &bin,
        "scontrol",
        "echo 'PID      JOBID    STEPID   LOCALID GLOBALID'",
    );
    let mut c = monitor(tmp.path());
    c.env("PATH", path_with(&bin))
        .env("SLURM_JOB_ID", "88")
        .args(["-i", "100ms", "--host-name", "s2", "-d", "out"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mon = c.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(tmp.path().join(".ipc-88"), "FINISHED").unwrap();
    let out = cli_support::wait_output(mon, LIMIT);
    assert_eq!(out.status.code(), Some(0));
    let m = metrics(&tmp.path().join("out"));
    let cpu = read_json(&m.join("cpu_metrics.json"));
    assert_eq!(cpu["s2"]["time_stamps"], serde_json::json!([]));
    let log = std::fs::read_to_string(tmp.path().join("out/perfflow-monitor.s2.log")).unwrap();
    assert!(log.contains("waiting for the job's processes"), "{log}");
}
