//! `labels=k1=v1,k2=v2` in `PERFFLOW_OPTIONS` is written into the
//! `perfflow_process` metadata at the opening of the trace, where
//! `perfflow-trace db` reads it as the run's labels; without the option
//! the metadata has no `labels`.

mod support;

use support::*;

/// Runs `e2e_fib` with `options` and returns its `perfflow_process` args.
fn opening(test: &str, options: Option<&str>) -> serde_json::Value {
    let scratch = Scratch::new(test);
    let mut cmd = command(&program("e2e_fib"), &scratch.path);
    if let Some(options) = options {
        cmd.env("PERFFLOW_OPTIONS", options);
    }
    let done = run(&mut cmd);
    assert!(done.status.success(), "{}", done.stderr);
    assert!(!done.stderr.contains("PERFFLOW_OPTIONS"), "{}", done.stderr);
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    let trace = Trace::read(&scratch.join(&name));
    let about = trace
        .events
        .iter()
        .find(|e| e.is_metadata() && e.name() == "perfflow_process")
        .unwrap_or_else(|| panic!("no perfflow_process metadata in {name}"));
    about.value["args"].clone()
}

#[test]
fn the_labels_option_reaches_the_trace_opening() {
    let args = opening("labels", Some("labels=fs=shm,size=2:name=fib"));
    assert_eq!(
        args["labels"],
        serde_json::json!({"fs": "shm", "size": "2"}),
        "{args}"
    );
}

#[test]
fn a_run_without_labels_writes_none() {
    let args = opening("no_labels", None);
    assert!(args.get("labels").is_none(), "{args}");
}
