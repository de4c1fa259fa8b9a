//! A program that closed its stderr and got descriptor 2 back for a file
//! of its own never finds the runtime's warnings in that file; a pipe it
//! put there on purpose still gets them. See
//! `tests/c/results_file_on_descriptor_2.c`.

mod support;

use support::{command, program, run, Finished, Scratch};

/// Runs the program with `args` and a log-dir below a regular file, which
/// cannot be made: the runtime has a warning to give. Expects it to end
/// well.
fn run_with_a_warning(name: &str, args: [&str; 2]) -> Finished {
    let dir = Scratch::new(name);
    let file = dir.join("not-a-dir");
    std::fs::write(&file, "").expect("a regular file");
    let args = args.map(|a| a.replace("{dir}", &dir.path.display().to_string()));
    let done = run(command(&program("results_file_on_descriptor_2"), &dir.path)
        .args(args)
        .env(
            "PERFFLOW_OPTIONS",
            format!("log-dir={}", file.join("traces").display()),
        ));
    assert!(
        done.status.success(),
        "{}; stdout: {}",
        done.status,
        done.stdout
    );
    done
}

#[test]
fn a_results_file_on_descriptor_2_holds_only_the_programs_bytes() {
    let done = run_with_a_warning("fd2-results", ["reopen", "{dir}/results.txt"]);
    assert_eq!(
        done.printed("results").as_deref(),
        Some("results:12345678"),
        "{}",
        done.stdout
    );
    assert_eq!(
        done.printed("bytes").as_deref(),
        Some("16"),
        "{}",
        done.stdout
    );
}

#[test]
fn a_pipe_put_on_descriptor_2_still_gets_the_warning() {
    let done = run_with_a_warning("fd2-pipe", ["dup2", "-"]);
    let got: usize = done
        .printed("pipe")
        .and_then(|v| v.parse().ok())
        .expect("pipe bytes printed");
    assert!(got > 0, "no warning reached the pipe: {}", done.stdout);
}
