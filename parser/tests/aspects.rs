//! Annotations that parse into an aspect.

use perfflow_parser::{parse_annotation, Annotation, Aspect, Flow, Pointcut};

fn aspect(input: &str) -> Aspect {
    match parse_annotation(input) {
        Annotation::Aspect(aspect) => aspect,
        other => panic!("{input:?} did not parse to an aspect: {other:?}"),
    }
}

fn with(pointcut: Pointcut, scope: Option<&str>, flow: Flow) -> Aspect {
    Aspect {
        pointcut,
        scope: scope.map(str::to_string),
        flow,
    }
}

#[test]
fn empty_parentheses_give_the_defaults() {
    assert_eq!(
        aspect("@critical_path()"),
        with(Pointcut::Around, None, Flow::None)
    );
}

#[test]
fn the_default_aspect_matches_empty_parentheses() {
    assert_eq!(aspect("@critical_path()"), Aspect::default());
}

#[test]
fn the_long_prefix_is_accepted() {
    assert_eq!(
        aspect("@perfflowaspect.aspect.critical_path(pointcut='before')"),
        with(Pointcut::Before, None, Flow::None)
    );
}

#[test]
fn the_short_prefix_is_accepted() {
    assert_eq!(
        aspect("@critical_path(pointcut='after')"),
        with(Pointcut::After, None, Flow::None)
    );
}

#[test]
fn every_pointcut_value_is_accepted() {
    for (text, pointcut) in [
        ("around", Pointcut::Around),
        ("before", Pointcut::Before),
        ("after", Pointcut::After),
        ("around_async", Pointcut::AroundAsync),
        ("before_async", Pointcut::BeforeAsync),
        ("after_async", Pointcut::AfterAsync),
    ] {
        let input = format!("@critical_path(pointcut='{text}')");
        assert_eq!(aspect(&input).pointcut, pointcut, "{input}");
    }
}

#[test]
fn every_flow_value_is_accepted() {
    for (text, flow) in [
        ("in", Flow::In),
        ("out", Flow::Out),
        ("inout", Flow::InOut),
        ("outin", Flow::OutIn),
    ] {
        let input = format!("@critical_path(flow='{text}')");
        assert_eq!(aspect(&input).flow, flow, "{input}");
    }
}

#[test]
fn all_three_arguments_combine() {
    assert_eq!(
        aspect("@critical_path(pointcut='around', scope='io', flow='in')"),
        with(Pointcut::Around, Some("io"), Flow::In)
    );
}

#[test]
fn omitted_pointcut_defaults_to_around() {
    assert_eq!(
        aspect("@critical_path(flow=out)").pointcut,
        Pointcut::Around
    );
}

#[test]
fn omitted_flow_defaults_to_none() {
    assert_eq!(aspect("@critical_path(pointcut=before)").flow, Flow::None);
}

#[test]
fn omitted_scope_is_absent() {
    assert_eq!(aspect("@critical_path(flow=in)").scope, None);
}

#[test]
fn arguments_may_come_in_any_order() {
    let expected = with(Pointcut::BeforeAsync, Some("net"), Flow::OutIn);
    for input in [
        "@critical_path(pointcut=before_async, scope='net', flow=outin)",
        "@critical_path(flow=outin, pointcut=before_async, scope='net')",
        "@critical_path(scope='net', flow=outin, pointcut=before_async)",
    ] {
        assert_eq!(aspect(input), expected, "{input}");
    }
}

#[test]
fn bare_and_quoted_values_mean_the_same() {
    assert_eq!(
        aspect("@critical_path(pointcut=after_async, flow=inout)"),
        aspect("@critical_path(pointcut='after_async', flow='inout')")
    );
}

#[test]
fn values_are_case_insensitive() {
    assert_eq!(
        aspect("@critical_path(pointcut=Around_ASYNC, flow='InOut')"),
        with(Pointcut::AroundAsync, None, Flow::InOut)
    );
}

#[test]
fn scope_keeps_its_case() {
    assert_eq!(
        aspect("@critical_path(scope='MixedCase')").scope.as_deref(),
        Some("MixedCase")
    );
}

#[test]
fn whitespace_is_allowed_everywhere() {
    let input = " \t@ critical_path \n( pointcut = 'before' ,\tscope = 'x' , flow = in ) \n";
    assert_eq!(aspect(input), with(Pointcut::Before, Some("x"), Flow::In));
}

#[test]
fn whitespace_is_allowed_inside_the_long_prefix() {
    assert_eq!(
        aspect("@ perfflowaspect . aspect . critical_path ()"),
        Aspect::default()
    );
}

#[test]
fn unicode_whitespace_separates_tokens() {
    assert_eq!(
        aspect("\u{a0}@critical_path(\u{2003}flow=in\u{3000})"),
        with(Pointcut::Around, None, Flow::In)
    );
}

#[test]
fn a_trailing_comma_is_allowed() {
    assert_eq!(aspect("@critical_path(flow=in,)").flow, Flow::In);
}

#[test]
fn an_escaped_quote_in_scope_is_a_quote() {
    assert_eq!(
        aspect(r"@critical_path(scope='it\'s')").scope.as_deref(),
        Some("it's")
    );
}

#[test]
fn an_escaped_backslash_in_scope_is_a_backslash() {
    assert_eq!(
        aspect(r"@critical_path(scope='a\\b')").scope.as_deref(),
        Some(r"a\b")
    );
}

#[test]
fn an_escaped_backslash_may_end_the_scope() {
    assert_eq!(
        aspect(r"@critical_path(scope='dir\\')").scope.as_deref(),
        Some("dir\\")
    );
}

#[test]
fn scope_may_hold_any_unicode_and_punctuation() {
    assert_eq!(
        aspect("@critical_path(scope='größe ☃ (a=b, c)')")
            .scope
            .as_deref(),
        Some("größe ☃ (a=b, c)")
    );
}

#[test]
fn scope_may_be_empty() {
    assert_eq!(
        aspect("@critical_path(scope='')").scope.as_deref(),
        Some("")
    );
}

#[test]
fn pointcut_names_round_trip_through_as_str() {
    for input in [
        "around",
        "before",
        "after",
        "around_async",
        "before_async",
        "after_async",
    ] {
        let parsed = aspect(&format!("@critical_path(pointcut={input})"));
        assert_eq!(parsed.pointcut.as_str(), input);
    }
}

#[test]
fn flow_names_round_trip_through_as_str() {
    for input in ["in", "out", "inout", "outin"] {
        let parsed = aspect(&format!("@critical_path(flow={input})"));
        assert_eq!(parsed.flow.as_str(), input);
    }
    assert_eq!(Flow::None.as_str(), "none");
}

#[test]
fn pointcuts_report_their_enter_exit_and_async_nature() {
    use Pointcut::*;
    let table = [
        (Around, true, true, false),
        (Before, true, false, false),
        (After, false, true, false),
        (AroundAsync, true, true, true),
        (BeforeAsync, true, false, true),
        (AfterAsync, false, true, true),
    ];
    for (pointcut, enter, exit, is_async) in table {
        assert_eq!(pointcut.has_enter(), enter, "{pointcut:?}");
        assert_eq!(pointcut.has_exit(), exit, "{pointcut:?}");
        assert_eq!(pointcut.is_async(), is_async, "{pointcut:?}");
    }
}

#[test]
fn discriminants_match_the_c_header() {
    assert_eq!(Pointcut::Around as u32, 0);
    assert_eq!(Pointcut::Before as u32, 1);
    assert_eq!(Pointcut::After as u32, 2);
    assert_eq!(Pointcut::AroundAsync as u32, 3);
    assert_eq!(Pointcut::BeforeAsync as u32, 4);
    assert_eq!(Pointcut::AfterAsync as u32, 5);
    assert_eq!(Flow::None as u32, 0);
    assert_eq!(Flow::In as u32, 1);
    assert_eq!(Flow::Out as u32, 2);
    assert_eq!(Flow::InOut as u32, 3);
    assert_eq!(Flow::OutIn as u32, 4);
}
