//! The opening of every trace holds a `perfflow_process` metadata event:
//! the host, the executable, its command line, the MPI rank from the first
//! rank variable a launcher set, the pairing of the monotonic and wall clocks the events
//! were converted with, and the kernel's clock error estimate. These name
//! processes and align hosts when `perfflow-trace merge` puts many
//! processes on one timeline.

mod support;

use perfflow_runtime::process_info::RANK_VARIABLES;
use support::*;

/// Runs `e2e_fib` with the rank variables `ranks` and the arguments
/// `words`, and returns its `perfflow_process` args, the printed host and
/// the first event's time.
fn opening(test: &str, ranks: &[(&str, &str)], words: &[&str]) -> (serde_json::Value, String, u64) {
    let scratch = Scratch::new(test);
    let mut cmd = command(&program("e2e_fib"), &scratch.path);
    cmd.args(words);
    for var in RANK_VARIABLES {
        cmd.env_remove(var);
    }
    cmd.envs(ranks.iter().copied());
    let done = run(&mut cmd);
    assert!(done.status.success(), "{}", done.stderr);
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    let trace = Trace::read(&scratch.join(&name));
    let about = trace
        .events
        .iter()
        .take(3)
        .find(|e| e.is_metadata() && e.name() == "perfflow_process")
        .unwrap_or_else(|| panic!("no perfflow_process metadata at the opening of {name}"));
    let first = trace
        .events
        .iter()
        .find(|e| !e.is_metadata())
        .expect("an event")
        .ts();
    (about.value["args"].clone(), done.host(), first)
}

#[test]
fn the_trace_opening_names_the_host_executable_rank_and_clock() {
    let (args, host, first_ns) = opening(
        "rank",
        &[
            ("SLURM_PROCID", "5"),
            ("PMI_RANK", "3"),
            ("FLUX_TASK_RANK", "9"),
        ],
        &["two words", "-x"],
    );
    assert_eq!(args["host"], host.as_str());
    assert_eq!(args["exe"], "e2e_fib");
    assert_eq!(
        args["rank"], 3,
        "PMI_RANK comes before SLURM_PROCID: {args}"
    );
    let command = args["command"].as_array().expect("command");
    assert_eq!(command.len(), 3, "{args}");
    assert!(command[0].as_str().unwrap().ends_with("e2e_fib"), "{args}");
    assert_eq!(command[1..], ["two words", "-x"]);
    assert!(args.get("command_cut").is_none(), "{args}");

    let clock = &args["clock"];
    let real0 = clock["realtime_ns"].as_u64().expect("realtime_ns");
    assert!(clock["monotonic_ns"].as_u64().is_some(), "{clock}");
    // The pairing is taken at start-up, before the first event.
    assert!(real0 <= first_ns, "{real0} > {first_ns}");
    // adjtimex in read-only mode needs no privilege.
    assert!(clock["esterror_us"].as_i64().is_some(), "{clock}");
    assert!(clock["maxerror_us"].as_i64().is_some(), "{clock}");
    assert!(clock["synchronized"].is_boolean(), "{clock}");
}

#[test]
fn a_process_without_a_launcher_has_no_rank() {
    let (args, _, _) = opening("no_rank", &[("PMIX_RANK", "not-a-rank")], &[]);
    assert!(args.get("rank").is_none(), "{args}");
    assert_eq!(args["exe"], "e2e_fib");
}
