//! Properties that must hold for every input.

use perfflow_parser::{parse_annotation, render_errors, Annotation, Aspect, Flow, Pointcut};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

/// Pieces of the annotation language, plus some that do not belong to it.
const FRAGMENTS: &[&str] = &[
    "@",
    "@critical_path",
    "@perfflowaspect.aspect.critical_path",
    "critical_path",
    "perfflowaspect",
    ".",
    "(",
    ")",
    "=",
    ",",
    "'",
    "\\",
    "\\'",
    "\\\\",
    "pointcut",
    "scope",
    "flow",
    "Flow",
    "around",
    "before_async",
    "after",
    "in",
    "outin",
    "'io'",
    " ",
    "\t",
    "\n",
    "\u{a0}",
    "#",
    "é",
    "☃",
    "𝄞",
    "\u{301}",
    "\0",
];

fn fragments() -> impl Strategy<Value = String> {
    vec(select(FRAGMENTS), 0..24).prop_map(|parts| parts.concat())
}

/// Checks everything a result must satisfy, whatever the input.
fn check(input: &str) -> Result<(), TestCaseError> {
    if let Annotation::Invalid(errors) = parse_annotation(input) {
        prop_assert!(!errors.is_empty());
        for error in &errors {
            let span = &error.span;
            prop_assert!(span.start <= span.end, "{span:?} in {input:?}");
            prop_assert!(span.end <= input.len(), "{span:?} in {input:?}");
            prop_assert!(input.is_char_boundary(span.start), "{span:?} in {input:?}");
            prop_assert!(input.is_char_boundary(span.end), "{span:?} in {input:?}");
            prop_assert!(!error.message.is_empty());
        }
        prop_assert!(render_errors(input, &errors).starts_with("error: "));
    }
    Ok(())
}

/// Writes `text` as a quoted value.
fn quote(text: &str) -> String {
    let mut out = String::from("'");
    for c in text.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

const POINTCUTS: [Pointcut; 6] = [
    Pointcut::Around,
    Pointcut::Before,
    Pointcut::After,
    Pointcut::AroundAsync,
    Pointcut::BeforeAsync,
    Pointcut::AfterAsync,
];

const FLOWS: [Flow; 5] = [Flow::None, Flow::In, Flow::Out, Flow::InOut, Flow::OutIn];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_strings_never_break_the_parser(input in any::<String>()) {
        check(&input)?;
    }

    #[test]
    fn strings_over_the_annotation_alphabet_never_break_the_parser(
        input in r#"[@a-z_.()=,'\\ \t\né☃𝄞#]{0,40}"#
    ) {
        check(&input)?;
    }

    #[test]
    fn grammar_fragments_never_break_the_parser(input in fragments()) {
        check(&input)?;
    }

    #[test]
    fn fragments_after_our_name_never_break_the_parser(rest in fragments()) {
        check(&format!("@critical_path({rest}"))?;
    }

    #[test]
    fn any_written_aspect_parses_back_to_itself(
        pointcut in select(&POINTCUTS[..]),
        flow in select(&FLOWS[..]),
        scope in proptest::option::of(any::<String>()),
        quoted in any::<bool>(),
        reversed in any::<bool>(),
        space in select(&["", " ", "\t", "\n  "][..]),
    ) {
        let value = |text: &str| if quoted { quote(text) } else { text.to_string() };
        let mut args = vec![format!("pointcut{space}={space}{}", value(pointcut.as_str()))];
        if let Some(scope) = &scope {
            args.push(format!("scope={}", quote(scope)));
        }
        if flow != Flow::None {
            args.push(format!("flow={space}{}", value(flow.as_str())));
        }
        if reversed {
            args.reverse();
        }
        let input = format!("{space}@critical_path{space}({}){space}", args.join(&format!(",{space}")));
        let expected = Aspect { pointcut, scope, flow };
        prop_assert_eq!(parse_annotation(&input), Annotation::Aspect(expected), "{}", input);
    }
}
