//! Semantic checks: turns the raw tree from the grammar into an [`Aspect`],
//! collecting every problem on the way.

use crate::ast::{RawAnnotation, RawArg, Span, Value, ValueKind, Word};
use crate::{Aspect, Flow, ParseError, Pointcut};

/// The keys an argument may use, in the order they are listed in messages.
const KEYS: &str = "pointcut, scope, flow";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Pointcut,
    Scope,
    Flow,
}

impl Key {
    fn from_name(name: &str) -> Option<Key> {
        match name {
            "pointcut" => Some(Key::Pointcut),
            "scope" => Some(Key::Scope),
            "flow" => Some(Key::Flow),
            _ => None,
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    fn name(self) -> &'static str {
        match self {
            Key::Pointcut => "pointcut",
            Key::Scope => "scope",
            Key::Flow => "flow",
        }
    }

    /// What a value for this key may be, for "expected ..." messages.
    fn accepted(self) -> String {
        match self {
            Key::Pointcut => one_of(Pointcut::ALL.iter().map(Pointcut::as_str)),
            Key::Scope => "a quoted label such as 'name'".to_string(),
            Key::Flow => one_of(Flow::ALL.iter().map(Flow::as_str)),
        }
    }
}

fn one_of<'a>(names: impl Iterator<Item = &'a str>) -> String {
    format!("one of {}", names.collect::<Vec<_>>().join(", "))
}

fn error(span: Span, message: impl Into<String>) -> ParseError {
    ParseError {
        span,
        message: message.into(),
    }
}

/// Checks `raw` (parsed from `input`), appending problems to `errors`, and
/// returns the aspect it describes. The aspect is only meaningful when no
/// error was added.
///
/// `open_quote_at_end` tells that the input ends inside an unterminated
/// quote; that quote has swallowed the closing parenthesis, and one error
/// for it is enough.
pub fn validate(
    input: &str,
    raw: &RawAnnotation<'_>,
    open_quote_at_end: bool,
    errors: &mut Vec<ParseError>,
) -> Aspect {
    let mut aspect = Aspect::default();
    let mut seen: [Option<Span>; 3] = [None, None, None];

    for arg in &raw.args {
        let (key, eq, value) = match arg {
            RawArg::Broken(problem) => {
                errors.push(problem.clone());
                continue;
            }
            RawArg::Pair { key, eq, value } => (key, eq, value.as_ref()),
        };
        let known = Key::from_name(key.text);
        let whole = key.span.start
            ..value.map_or(eq.as_ref().map_or(key.span.end, |e| e.end), |v| v.span.end);

        match known {
            None if eq.is_none() && value.is_none() => errors.push(error(
                key.span.clone(),
                format!(
                    "expected 'key=value', found '{}': keys are {KEYS}",
                    key.text
                ),
            )),
            None => errors.push(unknown_key(key)),
            Some(_) => {}
        }

        match (eq, value, known) {
            (None, Some(_), _) => errors.push(error(
                whole.clone(),
                format!("missing '=' between '{}' and its value", key.text),
            )),
            (None, None, Some(k)) => errors.push(error(
                key.span.clone(),
                format!("missing '=' and value after '{}'", k.name()),
            )),
            (Some(_), None, Some(k)) => errors.push(error(
                whole.clone(),
                format!(
                    "missing value for '{}': expected {}",
                    k.name(),
                    k.accepted()
                ),
            )),
            (Some(_), None, None) => errors.push(error(
                whole.clone(),
                format!("missing value after '{}='", key.text),
            )),
            _ => {}
        }

        let text = match value {
            Some(v) if v.kind == ValueKind::Unterminated => {
                errors.push(unterminated_quote(v.span.clone()));
                None
            }
            Some(v) => decode(v, errors),
            None => None,
        };

        let Some(k) = known else { continue };
        if let Some(first) = &seen[k.index()] {
            let first_text = input.get(first.clone()).unwrap_or_default();
            errors.push(error(
                whole.clone(),
                format!(
                    "duplicate key '{}': first given as {first_text} at byte {}",
                    k.name(),
                    first.start
                ),
            ));
        } else {
            seen[k.index()] = Some(whole.clone());
        }

        let (Some(text), Some(v)) = (text, value) else {
            continue;
        };
        match k {
            Key::Pointcut => match Pointcut::ALL
                .into_iter()
                .find(|p| p.as_str().eq_ignore_ascii_case(&text))
            {
                Some(p) => aspect.pointcut = p,
                None => errors.push(bad_value(k, &text, v)),
            },
            Key::Flow => match Flow::ALL
                .into_iter()
                .find(|f| f.as_str().eq_ignore_ascii_case(&text))
            {
                Some(f) => aspect.flow = f,
                None => errors.push(bad_value(k, &text, v)),
            },
            Key::Scope if v.kind == ValueKind::Bare => errors.push(error(
                v.span.clone(),
                format!("scope must be quoted: write scope='{text}'"),
            )),
            Key::Scope => aspect.scope = Some(text),
        }
    }

    // When the first thing after the name is not even an argument, the
    // syntax error for it already says that '(' was expected.
    let first_broken = matches!(raw.args.first(), Some(RawArg::Broken(_)));
    match (&raw.open, &raw.close) {
        (None, _) if first_broken => {}
        (None, None) => errors.push(error(
            raw.name.end..raw.name.end,
            "missing '(': expected an argument list after the annotation name",
        )),
        (None, Some(_)) => errors.push(error(
            raw.name.end..raw.name.end,
            "missing '(' before the arguments",
        )),
        (Some(_), None) if !open_quote_at_end => {
            errors.push(error(raw.end..raw.end, "missing ')' at end of arguments"))
        }
        _ => {}
    }
    if let Some(trailing) = &raw.trailing {
        errors.push(error(trailing.clone(), "unexpected text after ')'"));
    }
    aspect
}

/// Error for a quote that is never closed.
pub fn unterminated_quote(span: Span) -> ParseError {
    error(span, "unterminated quote: expected a closing '")
}

fn unknown_key(key: &Word<'_>) -> ParseError {
    let lower = key.text.to_ascii_lowercase();
    let message = match Key::from_name(&lower) {
        Some(k) => format!(
            "unknown key '{}': keys are lower-case, did you mean '{}'?",
            key.text,
            k.name()
        ),
        None => format!("unknown key '{}': expected one of {KEYS}", key.text),
    };
    error(key.span.clone(), message)
}

fn bad_value(key: Key, text: &str, value: &Value<'_>) -> ParseError {
    error(
        value.span.clone(),
        format!(
            "unknown {} '{text}': expected {}",
            key.name(),
            key.accepted()
        ),
    )
}

/// The text of a value with quotes removed and escapes resolved; `None`
/// (after recording errors) if it holds an unknown escape.
fn decode(value: &Value<'_>, errors: &mut Vec<ParseError>) -> Option<String> {
    if value.kind == ValueKind::Bare {
        return Some(value.text.to_string());
    }
    let inner = value
        .text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .unwrap_or_default();
    let base = value.span.start + 1;
    let mut out = String::with_capacity(inner.len());
    let mut ok = true;
    let mut chars = inner.char_indices();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, e @ ('\'' | '\\'))) => out.push(e),
            Some((next, e)) => {
                ok = false;
                errors.push(error(
                    base + at..base + next + e.len_utf8(),
                    format!(
                        "unknown escape '\\{}': only \\' and \\\\ are allowed",
                        e.escape_debug()
                    ),
                ));
            }
            // The lexer never ends a quoted value right after a backslash,
            // but stay correct should that ever change.
            None => {
                ok = false;
                errors.push(error(
                    base + at..base + inner.len(),
                    "unfinished escape: expected \\' or \\\\ after '\\'",
                ));
            }
        }
    }
    ok.then_some(out)
}
