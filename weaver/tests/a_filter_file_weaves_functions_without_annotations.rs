//! Functions selected by a filter file are woven with the rule's aspect;
//! an annotation in the source wins; compiler-made functions are left alone.
//! The IR has no pointers in its functions, so it reads the same on every
//! LLVM.

mod support;

use inkwell::context::Context;
use perfflow_parser::filter::Filter;
use perfflow_parser::Pointcut;
use support::{advice_calls, annotation_of, module};
use WeavePass::{weave_module, FilterFile, Options};

fn options(rules: &str) -> Options {
    Options {
        filter: Some(FilterFile {
            path: "weave.filter".into(),
            filter: Filter::parse(rules).expect("filter parses"),
        }),
        ..Options::default()
    }
}

const PROGRAM: &str = r#"source_filename = "src/solver/app.c"
define i32 @solve_step(i32 %x) nounwind {
  ret i32 %x
}
define i32 @solve_helper(i32 %x) nounwind {
  ret i32 %x
}
define i32 @io_read(i32 %x) nounwind {
  ret i32 %x
}
define internal void @_GLOBAL__sub_I_app() nounwind {
  ret void
}
define i32 @_ZN7physics6Solver4stepEv() nounwind {
  ret i32 0
}
"#;

#[test]
fn included_functions_are_woven_and_excluded_ones_are_not() {
    let context = Context::create();
    let m = module(&context, PROGRAM);
    let report = weave_module(
        &m,
        &options("include function 'solve_*'\nexclude function '*_helper'\n"),
    )
    .expect("weaving succeeds");
    let names: Vec<&str> = report.woven.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["solve_step"]);
    assert_eq!(report.woven[0].file, "src/solver/app.c");
    m.verify().expect("woven module verifies");
    let ir = m.print_to_string().to_string();
    assert_eq!(
        advice_calls(&ir, "perfflow_site_enter", "solve_step"),
        1,
        "{ir}"
    );
    assert_eq!(
        advice_calls(&ir, "perfflow_site_exit", "solve_step"),
        1,
        "{ir}"
    );
    assert!(!ir.contains("@__perfflow_site.solve_helper"), "{ir}");
}

#[test]
fn the_rule_gives_pointcut_and_scope() {
    let context = Context::create();
    let m = module(&context, PROGRAM);
    let report = weave_module(
        &m,
        &options("include function io_read @critical_path(pointcut='before', scope='io')\n"),
    )
    .unwrap();
    assert_eq!(report.woven.len(), 1);
    let aspect = &report.woven[0].aspect;
    assert_eq!(aspect.pointcut, Pointcut::Before);
    assert_eq!(aspect.scope.as_deref(), Some("io"));
    let ir = m.print_to_string().to_string();
    assert_eq!(
        advice_calls(&ir, "perfflow_site_enter", "io_read"),
        1,
        "{ir}"
    );
}

#[test]
fn demangled_names_are_matched() {
    let context = Context::create();
    let m = module(&context, PROGRAM);
    let report = weave_module(&m, &options("include function 'physics::*'\n")).unwrap();
    let names: Vec<&str> = report.woven.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["physics::Solver::step"]);
}

#[test]
fn a_file_rule_weaves_the_user_functions_of_the_file_only() {
    let context = Context::create();
    let m = module(&context, PROGRAM);
    let report = weave_module(&m, &options("include file solver/*.c\n")).unwrap();
    let mut names: Vec<&str> = report.woven.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "io_read",
            "physics::Solver::step",
            "solve_helper",
            "solve_step"
        ]
    );
    m.verify().expect("woven module verifies");
}

#[test]
fn an_annotation_in_the_source_wins_over_the_filter() {
    let context = Context::create();
    let annotated = format!(
        "{PROGRAM}{}",
        annotation_of("io_read", "@critical_path(pointcut='after')", 3)
    );
    let m = module(&context, &annotated);
    let report = weave_module(
        &m,
        &options(
            "include function 'io_*' @critical_path(pointcut='before')\nexclude function io_read\n",
        ),
    )
    .unwrap();
    assert_eq!(report.woven.len(), 1);
    assert_eq!(report.woven[0].name, "io_read");
    assert_eq!(report.woven[0].aspect.pointcut, Pointcut::After);
}

#[test]
fn without_a_filter_nothing_unannotated_is_woven() {
    let context = Context::create();
    let m = module(&context, PROGRAM);
    let report = weave_module(&m, &Options::default()).unwrap();
    assert!(report.woven.is_empty());
}
