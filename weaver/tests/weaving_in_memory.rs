//! The weaver on modules parsed from IR text, without clang or opt.

mod support;

use inkwell::context::Context;
use support::{advice_calls, annotation_of, module};
use WeavePass::site::display_name;
use WeavePass::{weave_module, Options, WeaveError};

fn annotated(annotation: &str, body: &str) -> String {
    format!("{}{body}", annotation_of("work", annotation, 7))
}

const WORK: &str = "define i32 @work(i32 %x) nounwind {\n  ret i32 %x\n}\n";

#[test]
fn an_annotated_function_is_woven_and_verifies() {
    let context = Context::create();
    let m = module(
        &context,
        &annotated("@critical_path(pointcut='around', scope='s')", WORK),
    );
    let report = weave_module(&m, &Options::default()).expect("weaving succeeds");
    assert_eq!(report.woven.len(), 1);
    let site = &report.woven[0];
    assert_eq!(
        (site.name.as_str(), site.file.as_str(), site.line),
        ("work", "app.c", 7)
    );
    assert_eq!(site.aspect.scope.as_deref(), Some("s"));
    m.verify().expect("woven module verifies");
    let ir = m.print_to_string().to_string();
    assert_eq!(advice_calls(&ir, "perfflow_site_enter", "work"), 1, "{ir}");
    assert_eq!(advice_calls(&ir, "perfflow_site_exit", "work"), 1, "{ir}");
}

#[test]
fn weaving_the_same_module_twice_weaves_once() {
    let context = Context::create();
    let m = module(&context, &annotated("@critical_path()", WORK));
    assert_eq!(
        weave_module(&m, &Options::default()).unwrap().woven.len(),
        1
    );
    assert_eq!(
        weave_module(&m, &Options::default()).unwrap().woven.len(),
        0
    );
    let ir = m.print_to_string().to_string();
    assert_eq!(
        ir.matches("call void @perfflow_site_enter").count(),
        1,
        "{ir}"
    );
}

#[test]
fn strict_mode_rejects_a_malformed_annotation_and_changes_nothing() {
    let context = Context::create();
    let m = module(
        &context,
        &annotated("@critical_path(pointcut='sometimes')", WORK),
    );
    let before = m.print_to_string().to_string();
    let strict = Options {
        strict: true,
        ..Options::default()
    };
    assert!(matches!(
        weave_module(&m, &strict),
        Err(WeaveError::Rejected { count: 1 })
    ));
    assert_eq!(m.print_to_string().to_string(), before);
}

#[test]
fn a_malformed_annotation_leaves_the_function_unwoven() {
    let context = Context::create();
    let m = module(&context, &annotated("@critical_path(flow=sideways)", WORK));
    let report = weave_module(&m, &Options::default()).unwrap();
    assert_eq!((report.woven.len(), report.malformed), (0, 1));
}

#[test]
fn foreign_annotations_are_ignored() {
    let context = Context::create();
    let m = module(&context, &annotated("hot", WORK));
    let report = weave_module(&m, &Options::default()).unwrap();
    assert_eq!((report.woven.len(), report.malformed), (0, 0));
}

#[test]
fn class_methods_lose_their_parameter_list() {
    assert_eq!(display_name("_ZN9SmokeTest3fooEv"), "SmokeTest::foo");
}

#[test]
fn template_instances_keep_their_arguments() {
    assert_eq!(display_name("_Z4workIiEvT_"), "work<int>");
}

#[test]
fn c_names_stay_as_they_are() {
    assert_eq!(display_name("compute_step"), "compute_step");
}

#[test]
fn asm_label_marker_is_dropped() {
    assert_eq!(display_name("\u{1}renamed"), "renamed");
}
