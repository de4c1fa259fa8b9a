//! `PERFFLOW_OPTIONS`: every option and value, syntax, and warnings.

use std::path::PathBuf;
use std::sync::Mutex;

use perfflow_runtime::options::{
    FilenamePart, LogEvent, LogFormat, OptionWarning, Options, ENV_VAR, OPTIONS, WARNING_PREFIX,
};

/// Parses `text` and insists that it gives no warning.
fn clean(text: &str) -> Options {
    let (options, warnings) = Options::parse(text);
    assert!(warnings.is_empty(), "{text:?} warned: {warnings:?}");
    options
}

/// Parses `text` and insists that it gives exactly one warning.
fn one_warning(text: &str) -> (Options, OptionWarning) {
    let (options, mut warnings) = Options::parse(text);
    assert_eq!(warnings.len(), 1, "{text:?} warned: {warnings:?}");
    (options, warnings.remove(0))
}

const ALL_KEYS: &str =
    "name, log-filename-include, log-dir, log-enable, cpu-mem-usage, log-event, log-format, sampler, sampler-interval, sampler-metrics, signals, flush-interval, clock, labels, max-trace-size, min-free-space";

// Defaults and syntax.

#[test]
fn the_defaults_are_those_of_perfflowaspect() {
    let options = Options::default();
    assert_eq!(options.name, "generic");
    assert_eq!(
        options.filename_include,
        [FilenamePart::Hostname, FilenamePart::Pid]
    );
    assert_eq!(options.log_dir, PathBuf::from("./"));
    assert!(options.log_enable);
    assert!(!options.cpu_mem_usage);
    assert_eq!(options.log_event, LogEvent::Verbose);
    assert_eq!(options.log_format, LogFormat::Array);
}

#[test]
fn empty_text_gives_the_defaults() {
    assert_eq!(clean(""), Options::default());
}

#[test]
fn text_of_only_separators_and_blanks_gives_the_defaults() {
    assert_eq!(clean(" : ::\t: "), Options::default());
}

#[test]
fn empty_segments_between_options_are_skipped() {
    let options = clean("log-event=compact::log-format=object");
    assert_eq!(options.log_event, LogEvent::Compact);
    assert_eq!(options.log_format, LogFormat::Object);
}

#[test]
fn leading_and_trailing_separators_are_skipped() {
    assert_eq!(clean(":name=a:").name, "a");
}

#[test]
fn whitespace_around_names_and_values_is_trimmed() {
    let options = clean("  log-event  =  compact  : name = my app ");
    assert_eq!(options.log_event, LogEvent::Compact);
    assert_eq!(options.name, "my app");
}

#[test]
fn option_names_match_in_any_case() {
    let options = clean("LOG-EVENT=compact:Log-Enable=false:NaMe=x");
    assert_eq!(options.log_event, LogEvent::Compact);
    assert!(!options.log_enable);
    assert_eq!(options.name, "x");
}

#[test]
fn all_options_apply_together() {
    let options = clean(
        "name=solver:log-filename-include=pid,name:log-dir=/tmp/traces:\
         log-enable=False:cpu-mem-usage=True:log-event=Compact:log-format=Object",
    );
    assert_eq!(
        options,
        Options {
            name: "solver".into(),
            filename_include: vec![FilenamePart::Pid, FilenamePart::Name],
            log_dir: PathBuf::from("/tmp/traces"),
            log_enable: false,
            cpu_mem_usage: true,
            log_event: LogEvent::Compact,
            log_format: LogFormat::Object,
            ..Options::default()
        }
    );
}

#[test]
fn sampler_options_take_durations_and_source_lists() {
    let options = clean("sampler=True:sampler-interval=2s:sampler-metrics=proc, gpu");
    assert!(options.sampler);
    assert_eq!(options.sampler_interval, std::time::Duration::from_secs(2));
    assert_eq!(
        options.sampler_metrics,
        [
            perfflow_monitor::Source::Proc,
            perfflow_monitor::Source::Gpu
        ]
    );
    assert_eq!(
        clean("sampler-interval=250ms").sampler_interval,
        std::time::Duration::from_millis(250)
    );
    assert_eq!(
        clean("sampler-interval=0.5s").sampler_interval,
        std::time::Duration::from_millis(500)
    );
}

#[test]
fn a_sampler_interval_below_10ms_falls_back_with_one_warning() {
    let (options, warnings) = Options::parse("sampler-interval=1ms");
    assert_eq!(
        options.sampler_interval,
        std::time::Duration::from_millis(100)
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].to_string().contains("sampler-interval"),
        "{}",
        warnings[0]
    );
}

#[test]
fn an_unknown_sampler_metric_names_the_accepted_sources() {
    let (options, warnings) = Options::parse("sampler-metrics=proc,disk");
    assert_eq!(options.sampler_metrics.len(), 7);
    assert_eq!(warnings.len(), 1);
    let line = warnings[0].to_string();
    assert!(
        line.contains("disk") && line.contains("proc, system, net"),
        "{line}"
    );
}

#[test]
fn a_repeated_option_takes_its_last_value() {
    assert_eq!(
        clean("log-event=compact:log-event=verbose").log_event,
        LogEvent::Verbose
    );
}

// name

#[test]
fn name_is_kept_as_written() {
    assert_eq!(clean("name=MySolver").name, "MySolver");
}

#[test]
fn name_may_contain_an_equals_sign() {
    assert_eq!(clean("name=a=b").name, "a=b");
}

#[test]
fn name_keeps_characters_unsafe_in_file_names() {
    assert_eq!(clean("name=a/b").name, "a/b");
}

// log-filename-include

#[test]
fn log_filename_include_accepts_each_part_alone() {
    for (word, part) in [
        ("name", FilenamePart::Name),
        ("instance-path", FilenamePart::InstancePath),
        ("hostname", FilenamePart::Hostname),
        ("pid", FilenamePart::Pid),
    ] {
        let text = format!("log-filename-include={word}");
        assert_eq!(clean(&text).filename_include, [part]);
    }
}

#[test]
fn log_filename_include_keeps_the_order_given() {
    assert_eq!(
        clean("log-filename-include=pid,hostname,instance-path,name").filename_include,
        [
            FilenamePart::Pid,
            FilenamePart::Hostname,
            FilenamePart::InstancePath,
            FilenamePart::Name
        ]
    );
}

#[test]
fn log_filename_include_parts_match_in_any_case() {
    assert_eq!(
        clean("log-filename-include=NAME,Instance-Path,HostName,PID").filename_include,
        FilenamePart::ALL
    );
}

#[test]
fn log_filename_include_parts_are_trimmed() {
    assert_eq!(
        clean("log-filename-include= name , pid ").filename_include,
        [FilenamePart::Name, FilenamePart::Pid]
    );
}

#[test]
fn log_filename_include_skips_empty_items() {
    assert_eq!(
        clean("log-filename-include=name,,pid,").filename_include,
        [FilenamePart::Name, FilenamePart::Pid]
    );
}

// log-dir

#[test]
fn log_dir_is_kept_as_written() {
    assert_eq!(
        clean("log-dir=/scratch/Run 1/").log_dir,
        PathBuf::from("/scratch/Run 1/")
    );
}

#[test]
fn log_dir_may_be_relative() {
    assert_eq!(clean("log-dir=traces").log_dir, PathBuf::from("traces"));
}

// log-enable and cpu-mem-usage

const TRUE_WORDS: [&str; 9] = [
    "True", "true", "TRUE", "1", "yes", "YES", "on", "On", "tRuE",
];
const FALSE_WORDS: [&str; 9] = [
    "False", "false", "FALSE", "0", "no", "No", "off", "OFF", "fAlSe",
];

#[test]
fn log_enable_accepts_every_spelling_of_true() {
    for word in TRUE_WORDS {
        let text = format!("log-enable=False:log-enable={word}");
        assert!(clean(&text).log_enable, "{word}");
    }
}

#[test]
fn log_enable_accepts_every_spelling_of_false() {
    for word in FALSE_WORDS {
        assert!(!clean(&format!("log-enable={word}")).log_enable, "{word}");
    }
}

#[test]
fn cpu_mem_usage_accepts_every_spelling_of_true() {
    for word in TRUE_WORDS {
        assert!(
            clean(&format!("cpu-mem-usage={word}")).cpu_mem_usage,
            "{word}"
        );
    }
}

#[test]
fn cpu_mem_usage_accepts_every_spelling_of_false() {
    for word in FALSE_WORDS {
        let text = format!("cpu-mem-usage=True:cpu-mem-usage={word}");
        assert!(!clean(&text).cpu_mem_usage, "{word}");
    }
}

// log-event and log-format

#[test]
fn log_event_accepts_compact_in_any_case() {
    for word in ["Compact", "compact", "COMPACT", "cOmPaCt"] {
        let text = format!("log-event={word}");
        assert_eq!(clean(&text).log_event, LogEvent::Compact, "{word}");
    }
}

#[test]
fn log_event_accepts_verbose_in_any_case() {
    for word in ["Verbose", "verbose", "VERBOSE", "vErBoSe"] {
        let text = format!("log-event=compact:log-event={word}");
        assert_eq!(clean(&text).log_event, LogEvent::Verbose, "{word}");
    }
}

#[test]
fn log_format_accepts_object_in_any_case() {
    for word in ["Object", "object", "OBJECT", "oBjEcT"] {
        let text = format!("log-format={word}");
        assert_eq!(clean(&text).log_format, LogFormat::Object, "{word}");
    }
}

#[test]
fn log_format_accepts_perfetto_in_any_case() {
    for word in ["Perfetto", "perfetto", "PERFETTO"] {
        let text = format!("log-format={word}");
        assert_eq!(clean(&text).log_format, LogFormat::Perfetto, "{word}");
    }
}

#[test]
fn log_format_accepts_array_in_any_case() {
    for word in ["Array", "array", "ARRAY", "aRrAy"] {
        let text = format!("log-format=object:log-format={word}");
        assert_eq!(clean(&text).log_format, LogFormat::Array, "{word}");
    }
}

// Warnings.

#[test]
fn an_unknown_log_event_warns_once_and_uses_verbose() {
    let (options, warning) = one_warning("log-event=loud");
    assert_eq!(options, Options::default());
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: unknown value 'loud' for log-event: \
         expected Verbose or Compact; using Verbose"
    );
}

#[test]
fn an_unknown_log_format_warns_once_and_uses_array() {
    let (options, warning) = one_warning("log-format=yaml");
    assert_eq!(options, Options::default());
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: unknown value 'yaml' for log-format: \
         expected Array, Object or Perfetto; using Array"
    );
}

#[test]
fn an_unknown_log_enable_warns_once_and_uses_true() {
    let (options, warning) = one_warning("log-enable=maybe");
    assert_eq!(options, Options::default());
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: unknown value 'maybe' for log-enable: \
         expected True or False (also 1/0, yes/no, on/off); using True"
    );
}

#[test]
fn an_unknown_cpu_mem_usage_warns_once_and_uses_false() {
    let (options, warning) = one_warning("cpu-mem-usage=2");
    assert_eq!(options, Options::default());
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: unknown value '2' for cpu-mem-usage: \
         expected True or False (also 1/0, yes/no, on/off); using False"
    );
}

#[test]
fn an_empty_name_warns_once_and_uses_generic() {
    let (options, warning) = one_warning("name=  ");
    assert_eq!(options.name, "generic");
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: empty value for name: \
         expected a non-empty name; using generic"
    );
}

#[test]
fn an_empty_log_dir_warns_once_and_uses_the_current_directory() {
    let (options, warning) = one_warning("log-dir=");
    assert_eq!(options.log_dir, PathBuf::from("./"));
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: empty value for log-dir: \
         expected a directory path; using ./"
    );
}

#[test]
fn an_empty_boolean_warns_once_and_uses_the_default() {
    let (options, warning) = one_warning("log-enable=");
    assert!(options.log_enable);
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: empty value for log-enable: \
         expected True or False (also 1/0, yes/no, on/off); using True"
    );
}

#[test]
fn a_duplicate_file_name_part_warns_once_and_uses_hostname_pid() {
    let (options, warning) = one_warning("log-filename-include=pid,name,PID");
    assert_eq!(
        options.filename_include,
        Options::default().filename_include
    );
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: duplicate part 'PID' in 'pid,name,PID' \
         for log-filename-include: expected a comma-separated list of name, \
         instance-path, hostname, pid, each at most once; using hostname,pid"
    );
}

#[test]
fn an_unknown_file_name_part_warns_once_and_uses_hostname_pid() {
    let (options, warning) = one_warning("log-filename-include=name,host");
    assert_eq!(
        options.filename_include,
        Options::default().filename_include
    );
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: unknown part 'host' in 'name,host' \
         for log-filename-include: expected a comma-separated list of name, \
         instance-path, hostname, pid, each at most once; using hostname,pid"
    );
}

#[test]
fn a_file_name_list_of_only_commas_warns_once_and_uses_hostname_pid() {
    let (options, warning) = one_warning("log-filename-include=,,");
    assert_eq!(
        options.filename_include,
        Options::default().filename_include
    );
    assert!(warning
        .to_string()
        .starts_with("perfflow: PERFFLOW_OPTIONS: no part named in ',,' for log-filename-include"));
}

#[test]
fn an_unknown_option_warns_once_and_is_ignored() {
    let (options, warning) = one_warning("log-evnt=compact");
    assert_eq!(options, Options::default());
    assert_eq!(
        warning.to_string(),
        format!(
            "perfflow: PERFFLOW_OPTIONS: unknown option 'log-evnt' (value 'compact'): \
             expected one of {ALL_KEYS}; ignored"
        )
    );
}

#[test]
fn an_unknown_option_leaves_the_other_options_applied() {
    let (options, _) = one_warning("log-format=object:colour=red:log-event=compact");
    assert_eq!(options.log_format, LogFormat::Object);
    assert_eq!(options.log_event, LogEvent::Compact);
}

#[test]
fn a_segment_without_equals_warns_once_and_is_ignored() {
    let (options, warning) = one_warning("verbose");
    assert_eq!(options, Options::default());
    assert_eq!(
        warning.to_string(),
        format!(
            "perfflow: PERFFLOW_OPTIONS: missing '=' in 'verbose': expected \
             <option>=<value> with option one of {ALL_KEYS}; ignored"
        )
    );
}

#[test]
fn a_known_option_without_equals_keeps_its_default() {
    let (options, warning) = one_warning("log-enable");
    assert!(options.log_enable);
    assert_eq!(warning.option, "log-enable");
    assert_eq!(warning.value, None);
}

#[test]
fn a_segment_without_option_name_warns_once_and_is_ignored() {
    let (options, warning) = one_warning("=compact");
    assert_eq!(options, Options::default());
    assert_eq!(
        warning.to_string(),
        format!(
            "perfflow: PERFFLOW_OPTIONS: missing option name (value 'compact'): \
             expected one of {ALL_KEYS}; ignored"
        )
    );
}

#[test]
fn a_bad_value_after_a_good_one_restores_the_default() {
    let (options, _) = one_warning("log-event=compact:log-event=loud");
    assert_eq!(options.log_event, LogEvent::Verbose);
}

#[test]
fn a_bad_value_leaves_the_other_options_applied() {
    let (options, _) = one_warning("name=app:log-event=loud:log-format=object");
    assert_eq!(options.name, "app");
    assert_eq!(options.log_format, LogFormat::Object);
}

#[test]
fn several_mistakes_give_one_warning_each_in_order() {
    let (options, warnings) = Options::parse(
        "log-event=loud:bogus=1:log-enable=False:novalue:log-filename-include=pid,pid",
    );
    assert!(!options.log_enable);
    let named: Vec<&str> = warnings.iter().map(|w| w.option.as_str()).collect();
    assert_eq!(
        named,
        ["log-event", "bogus", "novalue", "log-filename-include"]
    );
}

#[test]
fn a_warning_names_the_canonical_option_and_the_trimmed_value() {
    let (_, warning) = one_warning(" LOG-EVENT = Loud ");
    assert_eq!(warning.option, "log-event");
    assert_eq!(warning.value.as_deref(), Some("Loud"));
    assert!(warning
        .message
        .starts_with("unknown value 'Loud' for log-event"));
}

#[test]
fn every_warning_line_starts_with_the_prefix_and_has_no_newline() {
    let (_, warnings) = Options::parse("a:b=c:log-event=x:name=");
    assert_eq!(warnings.len(), 4);
    for warning in warnings {
        let line = warning.to_string();
        assert!(line.starts_with(WARNING_PREFIX), "{line}");
        assert_eq!(line, format!("{WARNING_PREFIX}{}", warning.message));
        assert!(!line.contains('\n'), "{line}");
    }
}

#[test]
fn a_control_character_in_a_bad_value_is_escaped_to_keep_one_line() {
    let (_, warning) = one_warning("log-event=lo\nud");
    assert_eq!(warning.value.as_deref(), Some("lo\nud"));
    assert_eq!(
        warning.to_string(),
        "perfflow: PERFFLOW_OPTIONS: unknown value 'lo\\nud' for log-event: \
         expected Verbose or Compact; using Verbose"
    );
}

#[test]
fn the_option_table_lists_every_option_once() {
    let keys: Vec<&str> = OPTIONS.iter().map(|spec| spec.key).collect();
    assert_eq!(keys.join(", "), ALL_KEYS);
}

// The environment.

/// Serialises the tests that change the real environment.
static ENV_LOCK: Mutex<()> = Mutex::new(());

#[test]
fn from_env_gives_the_defaults_when_the_variable_is_unset() {
    let _guard = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    std::env::remove_var(ENV_VAR);
    assert_eq!(Options::from_env(), (Options::default(), Vec::new()));
}

#[test]
fn from_env_gives_the_defaults_when_the_variable_is_empty() {
    let _guard = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var(ENV_VAR, "");
    assert_eq!(Options::from_env(), (Options::default(), Vec::new()));
}

#[test]
fn from_env_parses_the_variable() {
    let _guard = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var(ENV_VAR, "log-event=compact:oops");
    let (options, warnings) = Options::from_env();
    assert_eq!(options.log_event, LogEvent::Compact);
    assert_eq!(warnings.len(), 1);
}

#[test]
fn clock_accepts_tsc_monotonic_and_auto_which_is_the_default() {
    use perfflow_runtime::clock::ClockSource;
    assert_eq!(clean("").clock, None);
    assert_eq!(clean("clock=tsc:clock=Auto").clock, None);
    assert_eq!(clean("clock=TSC").clock, Some(ClockSource::Tsc));
    assert_eq!(clean("clock=monotonic").clock, Some(ClockSource::Monotonic));
    let (options, _) = one_warning("clock=hpet");
    assert_eq!(options.clock, None);
}
