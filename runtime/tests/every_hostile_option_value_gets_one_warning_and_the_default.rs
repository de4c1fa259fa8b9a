//! A bad value for any option never panics: it gives exactly one warning
//! line and the option's default, in the parser and in a traced program.

mod support;

use perfflow_runtime::options::{Options, OPTIONS, WARNING_PREFIX};
use support::{command, program, run, Scratch};

/// Values no option should choke on: overflowing, non-finite, negative,
/// signs and units alone, control characters, odd Unicode, very long text.
fn hostile_values() -> Vec<String> {
    let mut values: Vec<String> = [
        "1e300",
        "1e300s",
        "1e300ms",
        "1e309",
        "-1e300",
        "1e-300",
        "1e-300s",
        "18446744073709551616",
        "18446744073709551616s",
        "99999999999999999999999h",
        "inf",
        "-inf",
        "infinity",
        "NaN",
        "nans",
        "-0",
        "-0s",
        "0",
        "0ms",
        "-5ms",
        "+",
        "-",
        ".",
        "e",
        "s",
        "ms",
        "1..2s",
        "1e",
        "0x10",
        "1_000ms",
        "１０ms",
        "10 ms",
        "10m s",
        "10µs",
        "9ms",
        "ms10",
        "\u{0}",
        "a\u{0}b",
        "tab\there",
        "line\nbreak",
        "\u{1b}[31mred",
        "é",
        "🦀",
        "\u{202e}evil",
        ",",
        ",,,",
        "proc,proc",
        "name,name",
        "True,False",
        "=",
        "==",
        "a=b=c",
        "{",
        "/",
        "..",
    ]
    .iter()
    .map(|v| v.to_string())
    .collect();
    values.push("9".repeat(5000));
    values.push("x".repeat(70_000));
    values.push(format!("{}s", "9".repeat(400)));
    values
}

#[test]
fn no_value_of_any_option_panics_or_gives_more_than_one_warning() {
    for spec in OPTIONS {
        for value in hostile_values() {
            let text = format!("{}={value}", spec.key);
            let parsed = std::panic::catch_unwind(|| Options::parse(&text));
            let Ok((options, warnings)) = parsed else {
                panic!("{} = {value:?} panicked", spec.key);
            };
            assert!(
                warnings.len() <= 1,
                "{} = {value:?}: {warnings:?}",
                spec.key
            );
            if let Some(w) = warnings.first() {
                let line = w.to_string();
                assert!(line.starts_with(WARNING_PREFIX), "{line}");
                assert!(!line.contains('\n'), "{line:?}");
                assert!(line.contains(spec.key), "{line}");
                if line.contains("has no unit: read as") {
                    continue; // accepted, in seconds
                }
                // The option falls back to its default: parsing the default
                // alone gives the same settings.
                let (default, none) = Options::parse(&format!("{}={}", spec.key, spec.default));
                assert!(none.is_empty(), "{none:?}");
                assert_eq!(options, default, "{} = {value:?}", spec.key);
            }
        }
    }
}

#[test]
fn an_overflowing_sampler_interval_falls_back_to_the_default_with_one_warning() {
    for value in ["1e300", "1e300s", "1e30h", "18446744073709551616s"] {
        let (options, warnings) = Options::parse(&format!("sampler-interval={value}"));
        assert_eq!(warnings.len(), 1, "{value}: {warnings:?}");
        assert_eq!(
            options.sampler_interval,
            Options::default().sampler_interval
        );
    }
}

/// The traced program runs to its normal end with each hostile value, says
/// one line per bad option on stderr, and never mentions a panic.
#[test]
fn a_traced_program_with_hostile_values_runs_and_prints_one_line_per_bad_option() {
    let dir = Scratch::new("hostile-options");
    let bin = program("e2e_options");
    for value in ["1e300", "-1", "NaN", "\u{1b}[31m", "1e309s", ""] {
        for key in [
            "sampler-interval",
            "log-enable",
            "log-event",
            "sampler-metrics",
        ] {
            let options = format!("{key}={value}:log-dir=out:sampler=True");
            let done = run(command(&bin, &dir.path)
                .arg("quiet")
                .env("PERFFLOW_OPTIONS", &options));
            assert!(
                done.status.success(),
                "{options:?}: {}; stderr: {}",
                done.status,
                done.stderr
            );
            assert_eq!(done.printed("sum").as_deref(), Some("4950"), "{options:?}");
            assert!(
                !done.stderr.contains("panic"),
                "{options:?}: {}",
                done.stderr
            );
            let lines: Vec<&str> = done.stderr.lines().collect();
            assert_eq!(lines.len(), 1, "{options:?}: {}", done.stderr);
            assert!(lines[0].contains(key), "{options:?}: {}", lines[0]);
        }
    }
}
