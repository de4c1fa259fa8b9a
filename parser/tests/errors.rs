//! Annotations with problems: every problem is reported, with its span.

use perfflow_parser::{parse_annotation, Annotation, ParseError};

fn errors(input: &str) -> Vec<ParseError> {
    match parse_annotation(input) {
        Annotation::Invalid(errors) => errors,
        other => panic!("{input:?} was not invalid: {other:?}"),
    }
}

/// The single error for `input`, as (the text its span covers, message).
fn only_error(input: &str) -> (&str, String) {
    let errors = errors(input);
    assert_eq!(errors.len(), 1, "{input:?} gave {errors:#?}");
    let error = &errors[0];
    (&input[error.span.clone()], error.message.clone())
}

#[test]
fn an_unknown_key_names_the_accepted_keys() {
    let (text, message) = only_error("@critical_path(pointcat=around)");
    assert_eq!(text, "pointcat");
    assert_eq!(
        message,
        "unknown key 'pointcat': expected one of pointcut, scope, flow"
    );
}

#[test]
fn a_key_in_the_wrong_case_suggests_the_lower_case_key() {
    let (text, message) = only_error("@critical_path(Flow=in)");
    assert_eq!(text, "Flow");
    assert_eq!(
        message,
        "unknown key 'Flow': keys are lower-case, did you mean 'flow'?"
    );
}

#[test]
fn an_unknown_pointcut_names_the_accepted_values() {
    let (text, message) = only_error("@critical_path(pointcut='arround')");
    assert_eq!(text, "'arround'");
    assert_eq!(
        message,
        "unknown pointcut 'arround': expected one of around, before, after, \
         around_async, before_async, after_async"
    );
}

#[test]
fn an_unknown_flow_names_the_accepted_values() {
    let (text, message) = only_error("@critical_path(flow=sideways)");
    assert_eq!(text, "sideways");
    assert_eq!(
        message,
        "unknown flow 'sideways': expected one of in, out, inout, outin"
    );
}

#[test]
fn a_bare_scope_asks_for_quotes() {
    let (text, message) = only_error("@critical_path(scope=io)");
    assert_eq!(text, "io");
    assert_eq!(message, "scope must be quoted: write scope='io'");
}

#[test]
fn a_duplicate_key_points_at_the_second_and_mentions_the_first() {
    let (text, message) = only_error("@critical_path(flow=in, flow=out)");
    assert_eq!(text, "flow=out");
    assert_eq!(
        message,
        "duplicate key 'flow': first given as flow=in at byte 15"
    );
}

#[test]
fn a_key_followed_by_a_value_without_equals_is_missing_equals() {
    let (text, message) = only_error("@critical_path(pointcut around)");
    assert_eq!(text, "pointcut around");
    assert_eq!(message, "missing '=' between 'pointcut' and its value");
}

#[test]
fn a_lone_key_is_missing_equals_and_value() {
    let (text, message) = only_error("@critical_path(flow)");
    assert_eq!(text, "flow");
    assert_eq!(message, "missing '=' and value after 'flow'");
}

#[test]
fn a_lone_unknown_word_asks_for_key_value_form() {
    let (text, message) = only_error("@critical_path(around)");
    assert_eq!(text, "around");
    assert_eq!(
        message,
        "expected 'key=value', found 'around': keys are pointcut, scope, flow"
    );
}

#[test]
fn a_key_with_equals_but_no_value_is_missing_its_value() {
    let (text, message) = only_error("@critical_path(flow=)");
    assert_eq!(text, "flow=");
    assert_eq!(
        message,
        "missing value for 'flow': expected one of in, out, inout, outin"
    );
}

#[test]
fn an_unterminated_quote_is_reported_once() {
    let (text, message) = only_error("@critical_path(scope='abc");
    assert_eq!(text, "'abc");
    assert_eq!(message, "unterminated quote: expected a closing '");
}

#[test]
fn an_escaped_quote_does_not_close_the_value() {
    let (text, message) = only_error(r"@critical_path(scope='abc\')");
    assert_eq!(text, r"'abc\')");
    assert_eq!(message, "unterminated quote: expected a closing '");
}

#[test]
fn an_unterminated_quote_in_key_position_is_reported() {
    let (text, message) = only_error("@critical_path('flow");
    assert_eq!(text, "'flow");
    assert_eq!(message, "unterminated quote: expected a closing '");
}

#[test]
fn an_unknown_escape_is_reported_at_the_backslash() {
    let (text, message) = only_error(r"@critical_path(scope='a\tb')");
    assert_eq!(text, r"\t");
    assert_eq!(message, r"unknown escape '\t': only \' and \\ are allowed");
}

#[test]
fn a_missing_open_parenthesis_is_reported_after_the_name() {
    let input = "@critical_path flow=in)";
    let errors = errors(input);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].span, 14..14);
    assert_eq!(errors[0].message, "missing '(' before the arguments");
}

#[test]
fn a_name_without_arguments_is_missing_its_argument_list() {
    let errors = errors("@critical_path");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].span, 14..14);
    assert_eq!(
        errors[0].message,
        "missing '(': expected an argument list after the annotation name"
    );
}

#[test]
fn a_missing_close_parenthesis_is_reported_at_the_end() {
    let input = "@critical_path(flow=in  ";
    let errors = errors(input);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].span, 22..22);
    assert_eq!(errors[0].message, "missing ')' at end of arguments");
}

#[test]
fn text_after_the_close_parenthesis_is_reported() {
    let (text, message) = only_error("@critical_path(flow=in) and more)");
    assert_eq!(text, "and more)");
    assert_eq!(message, "unexpected text after ')'");
}

#[test]
fn a_stray_character_is_reported_with_what_was_expected() {
    let (text, message) = only_error("@critical_path(flow=in; pointcut=after)");
    assert_eq!(text, ";");
    assert_eq!(message, "unexpected character ';': expected ',' or ')'");
}

#[test]
fn a_stray_character_right_after_the_name_expects_an_open_parenthesis() {
    let (text, message) = only_error("@critical_path-foo(flow=in)");
    assert_eq!(text, "-");
    assert_eq!(message, "unexpected character '-': expected '('");
}

#[test]
fn a_multibyte_stray_character_is_spanned_whole() {
    let (text, message) = only_error("@critical_path(flow=☃)");
    assert_eq!(text, "☃");
    assert_eq!(message, "unexpected character '☃': expected a value");
}

#[test]
fn a_missing_comma_is_reported_at_the_next_argument() {
    let (text, message) = only_error("@critical_path(flow=in pointcut=after)");
    assert_eq!(text, "pointcut");
    assert_eq!(message, "unexpected 'pointcut': expected ',' or ')'");
}

#[test]
fn an_empty_argument_between_commas_is_reported() {
    let (text, message) = only_error("@critical_path(flow=in,,pointcut=after)");
    assert_eq!(text, ",");
    assert_eq!(message, "unexpected ',': expected ')' or a key");
}

#[test]
fn a_quoted_key_is_reported() {
    let (text, message) = only_error("@critical_path('flow'=in)");
    assert_eq!(text, "'flow'");
    assert_eq!(
        message,
        "unexpected quoted value 'flow': expected ')' or a key"
    );
}

#[test]
fn a_parenthesised_value_is_reported() {
    let errors = errors("@critical_path(flow=(in))");
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "unexpected '(': expected a value",
            "unexpected text after ')'"
        ]
    );
}

#[test]
fn every_problem_in_one_annotation_is_reported() {
    let input = "@critical_path(pointcut=arround, Flow=in, flow=sideways, scope=x, flow=out)";
    let all = errors(input);
    let found: Vec<(&str, &str)> = all
        .iter()
        .map(|e| (&input[e.span.clone()], e.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                "arround",
                "unknown pointcut 'arround': expected one of around, before, after, \
                 around_async, before_async, after_async"
            ),
            (
                "Flow",
                "unknown key 'Flow': keys are lower-case, did you mean 'flow'?"
            ),
            (
                "sideways",
                "unknown flow 'sideways': expected one of in, out, inout, outin"
            ),
            ("x", "scope must be quoted: write scope='x'"),
            (
                "flow=out",
                "duplicate key 'flow': first given as flow=sideways at byte 42"
            ),
        ]
    );
}

#[test]
fn parsing_resumes_after_a_broken_argument() {
    let input = "@critical_path(flow=in#x, pointcut=nowhere, scope)";
    let found: Vec<&str> = errors(input)
        .iter()
        .map(|e| &input[e.span.clone()])
        .collect();
    assert_eq!(found, ["#", "nowhere", "scope"]);
}

#[test]
fn syntax_and_meaning_errors_are_reported_together() {
    let input = "@critical_path(pointcut=after;, flow=upward) tail";
    let messages: Vec<String> = errors(input).into_iter().map(|e| e.message).collect();
    assert_eq!(
        messages,
        [
            "unexpected character ';': expected ',' or ')'",
            "unknown flow 'upward': expected one of in, out, inout, outin",
            "unexpected text after ')'",
        ]
    );
}

#[test]
fn errors_come_in_input_order() {
    let errors = errors("@critical_path(flow=x, pointcut=y, foo=z, flow=in) !");
    let starts: Vec<usize> = errors.iter().map(|e| e.span.start).collect();
    let mut sorted = starts.clone();
    sorted.sort_unstable();
    assert_eq!(starts, sorted);
    assert_eq!(errors.len(), 5, "{errors:#?}");
}

#[test]
fn a_syntax_problem_after_the_long_name_is_an_error() {
    let (text, message) = only_error("@perfflowaspect.aspect.critical_path(flow=in");
    assert_eq!(text, "");
    assert_eq!(message, "missing ')' at end of arguments");
}

#[test]
fn an_error_displays_as_its_message() {
    let errors = errors("@critical_path(bogus=1)");
    assert_eq!(errors[0].to_string(), errors[0].message);
}

#[test]
fn an_unknown_key_with_a_numeric_value_is_reported_as_an_unknown_key() {
    let (text, message) = only_error("@critical_path(extra=1)");
    assert_eq!(text, "extra");
    assert_eq!(
        message,
        "unknown key 'extra': expected one of pointcut, scope, flow"
    );
}

#[test]
fn a_numeric_pointcut_is_a_bad_value() {
    let (text, message) = only_error("@critical_path(pointcut=2)");
    assert_eq!(text, "2");
    assert!(message.starts_with("unknown pointcut '2'"), "{message}");
}
