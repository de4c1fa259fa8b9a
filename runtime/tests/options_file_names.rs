//! Trace file names and paths built from `log-filename-include`,
//! `log-format`, `name` and `log-dir`.

use std::path::PathBuf;

use perfflow_runtime::options::{
    file_name_safe, trace_file_name, trace_path, FilenamePart, Options,
};

const INSTANCE: &str = "356a192b";
const HOST: &str = "node7";
const PID: u32 = 4321;

/// The options `text` gives, which must parse without warnings.
fn options(text: &str) -> Options {
    let (options, warnings) = Options::parse(text);
    assert!(warnings.is_empty(), "{warnings:?}");
    options
}

/// The file name for `text` with the fixed instance, host and pid.
fn file(text: &str) -> String {
    trace_file_name(&options(text), INSTANCE, HOST, PID)
}

#[test]
fn the_default_file_name_has_hostname_then_pid() {
    assert_eq!(file(""), "perfflow.array.node7.4321.pfw");
}

#[test]
fn the_object_format_is_named_in_the_file_name() {
    assert_eq!(file("log-format=object"), "perfflow.object.node7.4321.pfw");
}

#[test]
fn the_perfetto_format_is_named_and_ends_in_pftrace() {
    assert_eq!(
        file("log-format=perfetto"),
        "perfflow.perfetto.node7.4321.pftrace"
    );
}

#[test]
fn a_file_name_of_the_name_alone() {
    assert_eq!(
        file("name=solver:log-filename-include=name"),
        "perfflow.array.solver.pfw"
    );
}

#[test]
fn a_file_name_of_the_instance_path_alone_has_braces() {
    assert_eq!(
        file("log-filename-include=instance-path"),
        "perfflow.array.{356a192b}.pfw"
    );
}

#[test]
fn a_file_name_of_the_hostname_alone() {
    assert_eq!(
        file("log-filename-include=hostname"),
        "perfflow.array.node7.pfw"
    );
}

#[test]
fn a_file_name_of_the_pid_alone() {
    assert_eq!(file("log-filename-include=pid"), "perfflow.array.4321.pfw");
}

#[test]
fn all_four_parts_in_the_documented_order() {
    assert_eq!(
        file("name=solver:log-filename-include=name,instance-path,hostname,pid"),
        "perfflow.array.solver.{356a192b}.node7.4321.pfw"
    );
}

#[test]
fn all_four_parts_in_reverse_order() {
    assert_eq!(
        file("name=solver:log-filename-include=pid,hostname,instance-path,name"),
        "perfflow.array.4321.node7.{356a192b}.solver.pfw"
    );
}

#[test]
fn all_four_parts_with_pid_first_and_name_last_but_one() {
    assert_eq!(
        file("name=solver:log-filename-include=pid,instance-path,name,hostname"),
        "perfflow.array.4321.{356a192b}.solver.node7.pfw"
    );
}

#[test]
fn all_four_parts_with_hostname_first_in_object_format() {
    assert_eq!(
        file("name=solver:log-format=object:log-filename-include=hostname,name,pid,instance-path"),
        "perfflow.object.node7.solver.4321.{356a192b}.pfw"
    );
}

#[test]
fn every_order_of_the_four_parts_is_followed() {
    let text = |part: FilenamePart| match part {
        FilenamePart::Name => "solver".to_string(),
        FilenamePart::InstancePath => format!("{{{INSTANCE}}}"),
        FilenamePart::Hostname => HOST.to_string(),
        FilenamePart::Pid => PID.to_string(),
    };
    let mut count = 0;
    for a in FilenamePart::ALL {
        for b in FilenamePart::ALL {
            for c in FilenamePart::ALL {
                for d in FilenamePart::ALL {
                    let order = [a, b, c, d];
                    if (1..4).any(|i| order[..i].contains(&order[i])) {
                        continue;
                    }
                    let list: Vec<&str> = order.iter().map(|p| p.keyword()).collect();
                    let got = file(&format!(
                        "name=solver:log-filename-include={}",
                        list.join(",")
                    ));
                    let parts: Vec<String> = order.into_iter().map(text).collect();
                    assert_eq!(got, format!("perfflow.array.{}.pfw", parts.join(".")));
                    count += 1;
                }
            }
        }
    }
    assert_eq!(count, 24);
}

#[test]
fn a_subset_of_name_and_pid() {
    assert_eq!(
        file("name=solver:log-filename-include=name,pid"),
        "perfflow.array.solver.4321.pfw"
    );
}

#[test]
fn a_subset_of_instance_path_and_hostname() {
    assert_eq!(
        file("log-filename-include=instance-path,hostname"),
        "perfflow.array.{356a192b}.node7.pfw"
    );
}

#[test]
fn a_subset_of_pid_and_name_in_that_order() {
    assert_eq!(
        file("log-filename-include=pid,name"),
        "perfflow.array.4321.generic.pfw"
    );
}

#[test]
fn slashes_in_the_name_become_underscores() {
    assert_eq!(
        file("name=a/b/../c:log-filename-include=name"),
        "perfflow.array.a_b_.._c.pfw"
    );
}

#[test]
fn backslashes_and_control_characters_in_the_name_become_underscores() {
    assert_eq!(
        file("name=a\\b\tc\u{7}d:log-filename-include=name"),
        "perfflow.array.a_b_c_d.pfw"
    );
}

#[test]
fn other_punctuation_and_non_ascii_in_the_name_are_kept() {
    assert_eq!(
        file("name=my app (v2)=ß:log-filename-include=name"),
        "perfflow.array.my app (v2)=ß.pfw"
    );
}

#[test]
fn an_f58_instance_path_is_kept_inside_braces() {
    let options = options("log-filename-include=instance-path,pid");
    assert_eq!(
        trace_file_name(&options, "ƒeF9QZG3.356a192b", HOST, PID),
        "perfflow.array.{ƒeF9QZG3.356a192b}.4321.pfw"
    );
}

#[test]
fn slashes_in_the_hostname_and_instance_path_become_underscores() {
    let options = options("log-filename-include=hostname,instance-path");
    assert_eq!(
        trace_file_name(&options, "a/b", "x/y", PID),
        "perfflow.array.x_y.{a_b}.pfw"
    );
}

#[test]
fn file_name_safe_borrows_text_that_needs_no_change() {
    assert!(matches!(
        file_name_safe("plain"),
        std::borrow::Cow::Borrowed("plain")
    ));
}

#[test]
fn the_default_path_is_in_the_current_directory() {
    assert_eq!(
        trace_path(&Options::default(), INSTANCE, HOST, PID),
        PathBuf::from("./perfflow.array.node7.4321.pfw")
    );
}

#[test]
fn the_path_is_under_log_dir() {
    assert_eq!(
        trace_path(&options("log-dir=/scratch/traces/"), INSTANCE, HOST, PID),
        PathBuf::from("/scratch/traces/perfflow.array.node7.4321.pfw")
    );
}
