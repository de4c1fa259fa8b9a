//! The runtime's interval options and the monitor's `-i` read durations
//! with one parser: the same text gives the same duration, and a number
//! without a unit is seconds in both, with one line saying so.

use std::time::Duration;

use perfflow_monitor::cli::args::{parse, Invocation};
use perfflow_runtime::options::Options;

fn monitor_interval(text: &str) -> (Duration, Vec<String>) {
    match parse(["-i", text]) {
        Ok(Invocation::Run(config)) => (config.interval, config.notes),
        other => panic!("-i {text}: {other:?}"),
    }
}

#[test]
fn both_tools_read_the_same_text_as_the_same_duration() {
    for text in ["250ms", "2s", "0.5s", "1.5m", "1h", "2", "0.25", "20000us"] {
        let (options, _) = Options::parse(&format!("sampler-interval={text}"));
        assert_eq!(options.sampler_interval, monitor_interval(text).0, "{text}");
    }
}

#[test]
fn a_number_alone_is_seconds_and_each_tool_says_so_in_one_line() {
    let (options, warnings) = Options::parse("sampler-interval=2");
    assert_eq!(options.sampler_interval, Duration::from_secs(2));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        warnings[0].to_string(),
        "perfflow: PERFFLOW_OPTIONS: sampler-interval: `2` has no unit: \
         read as 2 seconds (write 2s or 2000ms)"
    );
    let (interval, notes) = monitor_interval("2");
    assert_eq!(interval, Duration::from_secs(2));
    assert_eq!(
        notes,
        ["-i: `2` has no unit: read as 2 seconds (write 2s or 2000ms)"]
    );
}

#[test]
fn a_duration_with_a_unit_gives_no_line() {
    assert!(Options::parse("sampler-interval=2s").1.is_empty());
    assert!(monitor_interval("2s").1.is_empty());
}
