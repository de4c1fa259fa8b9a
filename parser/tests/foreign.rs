//! Strings that belong to other tools are recognised as foreign, not errors.

use perfflow_parser::{parse_annotation, Annotation};

fn assert_foreign(input: &str) {
    assert_eq!(parse_annotation(input), Annotation::Foreign, "{input:?}");
}

#[test]
fn an_empty_string_is_foreign() {
    assert_foreign("");
}

#[test]
fn whitespace_alone_is_foreign() {
    assert_foreign(" \t\n ");
}

#[test]
fn a_plain_word_is_foreign() {
    assert_foreign("my_tool");
}

#[test]
fn another_tools_at_annotation_is_foreign() {
    assert_foreign("@other(x)");
}

#[test]
fn a_longer_name_starting_with_ours_is_foreign() {
    assert_foreign("@critical_pathology()");
    assert_foreign("@critical_path_foo(pointcut=around)");
    assert_foreign("@critical_pathX");
}

#[test]
fn a_dotted_name_extending_ours_is_foreign() {
    assert_foreign("@critical_path.extra(flow=in)");
    assert_foreign("@perfflowaspect.aspect.critical_path.x()");
    assert_foreign("@critical_path.()");
}

#[test]
fn a_partial_long_prefix_is_foreign() {
    assert_foreign("@perfflowaspect.aspect(flow=in)");
    assert_foreign("@aspect.critical_path()");
    assert_foreign("@other.aspect.critical_path()");
}

#[test]
fn our_name_without_the_at_sign_is_foreign() {
    assert_foreign("critical_path(pointcut=around)");
}

#[test]
fn our_name_in_a_different_case_is_foreign() {
    assert_foreign("@Critical_Path()");
}

#[test]
fn text_before_the_at_sign_makes_it_foreign() {
    assert_foreign("x @critical_path()");
    assert_foreign("#@critical_path()");
}

#[test]
fn a_stray_character_after_the_at_sign_makes_it_foreign() {
    assert_foreign("@#critical_path()");
    assert_foreign("@'critical_path'()");
}

#[test]
fn unicode_text_is_foreign() {
    assert_foreign("größe ☃");
}
