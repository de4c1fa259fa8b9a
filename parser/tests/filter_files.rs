//! Filter files: rules, globs, precedence and every bad line reported.

use perfflow_parser::filter::{Action, Filter, Target};
use perfflow_parser::{Aspect, Flow, Pointcut};

fn filter(text: &str) -> Filter {
    Filter::parse(text).expect("filter parses")
}

#[test]
fn rules_keep_their_line_action_target_pattern_and_aspect() {
    let f = filter(
        "# comment\n\ninclude function 'physics::*' @critical_path(scope='solver', flow='in')\n\
         exclude file */vendor/*\n",
    );
    assert_eq!(f.rules.len(), 2);
    let rule = &f.rules[0];
    assert_eq!(
        (rule.line, rule.action, rule.target, rule.pattern.as_str()),
        (3, Action::Include, Target::Function, "physics::*")
    );
    assert_eq!(
        rule.aspect,
        Some(Aspect {
            pointcut: Pointcut::Around,
            scope: Some("solver".into()),
            flow: Flow::In,
        })
    );
    assert_eq!(f.rules[1].describe(), "line 4 (file '*/vendor/*')");
}

#[test]
fn an_include_without_an_aspect_traces_around() {
    let f = filter("include function compute\n");
    assert_eq!(f.decide("compute", None).aspect, Some(Aspect::default()));
    assert_eq!(f.decide("compute_all", None).aspect, None);
}

#[test]
fn function_globs_cross_namespace_separators() {
    let f = filter("include function '*::step'\ninclude function 'accumulate<*>'\n");
    assert!(f.decide("physics::Solver::step", None).aspect.is_some());
    assert!(f.decide("accumulate<double>", None).aspect.is_some());
    assert!(f.decide("step", None).aspect.is_none());
}

#[test]
fn exclusion_wins_over_inclusion_whatever_the_order() {
    let f = filter("exclude function '*helper*'\ninclude file app.c\n");
    assert!(f.decide("main_helper", Some("src/app.c")).aspect.is_none());
    let kept = f.decide("work", Some("src/app.c"));
    assert!(kept.aspect.is_some());
    assert_eq!(kept.matched, vec![1]);
}

#[test]
fn the_first_matching_include_gives_the_aspect() {
    let f = filter(
        "include function 'io_*' @critical_path(pointcut='before')\n\
         include file '*.c' @critical_path(pointcut='after')\n",
    );
    assert_eq!(
        f.decide("io_read", Some("a.c")).aspect.unwrap().pointcut,
        Pointcut::Before
    );
    assert_eq!(
        f.decide("compute", Some("a.c")).aspect.unwrap().pointcut,
        Pointcut::After
    );
}

#[test]
fn a_file_pattern_without_a_slash_matches_the_file_name_alone() {
    let f = filter("include file 'solver.c*'\n");
    assert!(f
        .decide("f", Some("/home/me/app/src/solver.cpp"))
        .aspect
        .is_some());
    assert!(f.decide("f", Some("solver.c")).aspect.is_some());
    assert!(f
        .decide("f", Some("/home/solver.cpp/other.c"))
        .aspect
        .is_none());
}

#[test]
fn a_file_pattern_with_a_slash_matches_any_tail_of_the_path() {
    let f = filter("include file src/io/*.c\n");
    assert!(f
        .decide("f", Some("/home/me/app/src/io/disk.c"))
        .aspect
        .is_some());
    assert!(f.decide("f", Some("src/io/disk.c")).aspect.is_some());
    assert!(f
        .decide("f", Some("/home/me/app/mysrc/io/disk.c"))
        .aspect
        .is_none());
}

#[test]
fn file_rules_match_nothing_when_the_file_is_unknown() {
    let f = filter("include file '*'\n");
    assert!(f.decide("anything", None).aspect.is_none());
    assert!(f.has_file_rules());
}

#[test]
fn quoted_patterns_may_hold_spaces() {
    let f = filter("include function \"(anonymous namespace)::*\"\n");
    assert!(f
        .decide("(anonymous namespace)::work", None)
        .aspect
        .is_some());
}

#[test]
fn every_bad_line_is_reported_with_its_number() {
    let errors = Filter::parse(
        "include function ok\n\
         inclde function x\n\
         include method x\n\
         exclude function x @critical_path()\n\
         include function x @critical_path(pointcut='sometimes')\n\
         include function x hot\n\
         include function 'open\n\
         include function\n\
         include function '[x'\n",
    )
    .unwrap_err();
    let lines: Vec<u32> = errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![2, 3, 4, 5, 6, 7, 8, 9]);
    assert!(
        errors[0].message.contains("`include` or `exclude`"),
        "{errors:?}"
    );
    assert!(
        errors[1].message.contains("`function` or `file`"),
        "{errors:?}"
    );
    assert!(errors[2].message.contains("takes no aspect"), "{errors:?}");
    assert!(errors[3].message.contains("sometimes"), "{errors:?}");
    assert!(
        errors[4].message.contains("expected an aspect"),
        "{errors:?}"
    );
    assert!(errors[5].message.contains("never closed"), "{errors:?}");
    assert!(errors[7].message.contains("bad pattern"), "{errors:?}");
}

#[test]
fn loading_a_missing_file_names_it() {
    let missing = std::env::temp_dir().join("perfflow-no-such-filter-file.txt");
    let message = Filter::load(&missing).unwrap_err();
    assert!(
        message.contains("perfflow-no-such-filter-file.txt"),
        "{message}"
    );
}

/// A device or a FIFO named as the filter would hang the compiler (a FIFO
/// nobody writes) or fill its memory (`/dev/zero`): only a regular file is
/// read, and one too large for a filter is refused.
#[test]
fn a_filter_that_is_not_a_regular_file_of_a_filter_s_size_is_refused() {
    let message = Filter::load(std::path::Path::new("/dev/zero")).unwrap_err();
    assert!(
        message.contains("/dev/zero") && message.contains("expected a regular file"),
        "{message}"
    );
    let dir = std::env::temp_dir().join(format!("perfflow-filter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("rules.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let message = Filter::load(&fifo).unwrap_err();
    assert!(message.contains("expected a regular file"), "{message}");
    let huge = dir.join("huge.txt");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(17 << 20).unwrap();
    let message = Filter::load(&huge).unwrap_err();
    assert!(message.contains("larger than 16 MiB"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}
