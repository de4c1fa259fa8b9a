//! Parser for perfflow's `@critical_path` annotation strings.
//!
//! C and C++ functions are marked for instrumentation with a Clang
//! annotation whose text is a small call-like expression:
//!
//! ```c
//! __attribute__((annotate("@critical_path(pointcut='around', scope='io', flow='in')")))
//! void read_block(void);
//! ```
//!
//! [`parse_annotation`] reads such a string and tells whether it belongs to
//! perfflow at all ([`Annotation::Foreign`] if not), what it asks for
//! ([`Annotation::Aspect`]), or everything that is wrong with it
//! ([`Annotation::Invalid`]).
//!
//! # Language
//!
//! ```text
//! annotation = "@" name "(" [ argument { "," argument } [ "," ] ] ")"
//! name       = "critical_path"
//!            | "perfflowaspect" "." "aspect" "." "critical_path"
//! argument   = key "=" value
//! key        = "pointcut" | "scope" | "flow"
//! value      = word | quoted
//! word       = letter-or-"_" { letter-or-digit-or-"_" }
//! quoted     = "'" { any character but "'" and "\" | "\'" | "\\" } "'"
//! ```
//!
//! White space may appear between any two tokens, and before and after the
//! whole annotation. Each key may be given at most once, in any order:
//!
//! | key        | values (case-insensitive, bare or quoted)                       | default  |
//! |------------|-----------------------------------------------------------------|----------|
//! | `pointcut` | `around`, `before`, `after`, `around_async`, `before_async`, `after_async` | `around` |
//! | `scope`    | any quoted label, e.g. `'io'`; `\'` is a quote, `\\` a backslash | none     |
//! | `flow`     | `in`, `out`, `inout`, `outin`                                    | none     |
//!
//! Keys are lower-case. An annotation whose name (the dotted word after `@`)
//! is not exactly one of the two names above belongs to another tool and is
//! reported as [`Annotation::Foreign`]; so are strings that do not start with
//! `@` at all. Once the name matches, every deviation from the grammar is an
//! error.
//!
//! # Errors
//!
//! Parsing does not stop at the first problem. After a malformed argument
//! the parser skips to the next `,` or `)` and goes on, and the meaning of
//! each argument (known key, accepted value, no repetition) is checked for
//! all of them, so one call reports everything it can find. Each
//! [`ParseError`] carries the byte range it is about; [`render_errors`]
//! shows them under the input text.
//!
//! ```
//! use perfflow_parser::{parse_annotation, Annotation, Aspect, Flow, Pointcut};
//!
//! let parsed = parse_annotation("@critical_path(pointcut=before, scope='io')");
//! assert_eq!(
//!     parsed,
//!     Annotation::Aspect(Aspect {
//!         pointcut: Pointcut::Before,
//!         scope: Some("io".to_string()),
//!         flow: Flow::None,
//!     })
//! );
//! assert_eq!(parse_annotation("@other_tool(x)"), Annotation::Foreign);
//! ```

use std::fmt;
use std::ops::Range;

use lalrpop_util::lalrpop_mod;

mod ast;
pub mod filter;
mod lexer;
pub mod names;
mod render;
mod tokens;
mod validate;

lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_qualifications)]
    grammar
);

pub use render::render_errors;

use tokens::Token;

/// When the advice runs relative to the annotated function.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pointcut {
    /// On entry and on exit.
    Around = 0,
    /// On entry only.
    Before = 1,
    /// On exit only.
    After = 2,
    /// On entry and on exit, recorded as asynchronous events.
    AroundAsync = 3,
    /// On entry only, recorded as an asynchronous event.
    BeforeAsync = 4,
    /// On exit only, recorded as an asynchronous event.
    AfterAsync = 5,
}

impl Pointcut {
    /// Every pointcut, in discriminant order.
    const ALL: [Pointcut; 6] = [
        Pointcut::Around,
        Pointcut::Before,
        Pointcut::After,
        Pointcut::AroundAsync,
        Pointcut::BeforeAsync,
        Pointcut::AfterAsync,
    ];

    /// The spelling used in annotations, e.g. `"around_async"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Pointcut::Around => "around",
            Pointcut::Before => "before",
            Pointcut::After => "after",
            Pointcut::AroundAsync => "around_async",
            Pointcut::BeforeAsync => "before_async",
            Pointcut::AfterAsync => "after_async",
        }
    }

    /// Whether events are recorded as asynchronous.
    pub fn is_async(&self) -> bool {
        matches!(
            self,
            Pointcut::AroundAsync | Pointcut::BeforeAsync | Pointcut::AfterAsync
        )
    }

    /// Whether advice runs when the function is entered.
    pub fn has_enter(&self) -> bool {
        matches!(
            self,
            Pointcut::Around | Pointcut::Before | Pointcut::AroundAsync | Pointcut::BeforeAsync
        )
    }

    /// Whether advice runs when the function returns.
    pub fn has_exit(&self) -> bool {
        matches!(
            self,
            Pointcut::Around | Pointcut::After | Pointcut::AroundAsync | Pointcut::AfterAsync
        )
    }
}

/// Direction of the flow event that links this function's trace events
/// with those of other processes.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Flow {
    /// No flow event.
    #[default]
    None = 0,
    /// Flow arrives here.
    In = 1,
    /// Flow leaves from here.
    Out = 2,
    /// Flow arrives on entry and leaves on exit.
    InOut = 3,
    /// Flow leaves on entry and arrives on exit.
    OutIn = 4,
}

impl Flow {
    /// Every value that may be written in an annotation.
    const ALL: [Flow; 4] = [Flow::In, Flow::Out, Flow::InOut, Flow::OutIn];

    /// The spelling used in annotations, e.g. `"inout"`; `"none"` for
    /// [`Flow::None`], which cannot be written.
    pub fn as_str(&self) -> &'static str {
        match self {
            Flow::None => "none",
            Flow::In => "in",
            Flow::Out => "out",
            Flow::InOut => "inout",
            Flow::OutIn => "outin",
        }
    }
}

/// What a valid `@critical_path` annotation asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aspect {
    /// When advice runs.
    pub pointcut: Pointcut,
    /// The `scope` label, if one was given.
    pub scope: Option<String>,
    /// The flow direction.
    pub flow: Flow,
}

impl Default for Aspect {
    /// What `@critical_path()` means: around, no scope, no flow.
    fn default() -> Self {
        Aspect {
            pointcut: Pointcut::Around,
            scope: None,
            flow: Flow::None,
        }
    }
}

/// One problem found in an annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte range of the input the problem is about. It always lies within
    /// the input and on character boundaries; it is empty when something is
    /// missing, and then marks where it should be.
    pub span: Range<usize>,
    /// Short lower-case description, naming what was expected.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// The result of reading one annotation string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Annotation {
    /// Not a perfflow annotation; it belongs to another tool.
    Foreign,
    /// A valid perfflow annotation.
    Aspect(Aspect),
    /// A perfflow annotation with at least one problem, in input order.
    Invalid(Vec<ParseError>),
}

/// Reads one annotation string. Never panics, whatever the input.
pub fn parse_annotation(input: &str) -> Annotation {
    let tokens = lexer::tokens(input);
    if !is_perfflow(&tokens) {
        return Annotation::Foreign;
    }

    // A quote that is never closed runs to the end, so it is the last token.
    let open_quote_at_end = matches!(tokens.last(), Some((_, Token::Unterminated(_), _)));

    let mut errors = Vec::new();
    let parsed = grammar::AnnotationParser::new().parse(tokens.into_iter().map(Ok));
    match parsed {
        Ok(raw) => {
            let aspect = validate::validate(input, &raw, open_quote_at_end, &mut errors);
            if errors.is_empty() {
                return Annotation::Aspect(aspect);
            }
        }
        Err(problem) => errors.push(syntax_error(&problem)),
    }
    errors.sort_by_key(|e| (e.span.start, e.span.end));
    errors.dedup();
    Annotation::Invalid(errors)
}

/// The names that make an annotation ours.
const NAMES: [&str; 2] = ["critical_path", "perfflowaspect.aspect.critical_path"];

/// Whether the tokens start with `@` followed by one of [`NAMES`]. The name
/// is the whole dotted word, so `@critical_path.x(...)` and
/// `@critical_pathology(...)` are not ours.
fn is_perfflow(tokens: &[(usize, Token<'_>, usize)]) -> bool {
    let mut rest = tokens.iter().map(|(_, token, _)| token);
    if rest.next() != Some(&Token::At) {
        return false;
    }
    let mut name = String::new();
    loop {
        match rest.next() {
            Some(Token::Ident(word)) => name.push_str(word),
            _ => return false,
        }
        match rest.next() {
            Some(Token::Dot) => name.push('.'),
            _ => break,
        }
    }
    NAMES.contains(&name.as_str())
}

type GrammarError<'a> = lalrpop_util::ParseError<usize, Token<'a>, std::convert::Infallible>;

/// Describes a token the grammar did not expect.
pub(crate) fn syntax_error(problem: &GrammarError<'_>) -> ParseError {
    use lalrpop_util::ParseError as E;
    match problem {
        E::UnrecognizedToken {
            token: (start, token, end),
            expected,
        } => {
            let message = match token {
                Token::Unterminated(_) => {
                    return validate::unterminated_quote(*start..*end);
                }
                Token::Stray(c) => format!("unexpected character {c:?}"),
                other => format!("unexpected {other}"),
            };
            ParseError {
                span: *start..*end,
                message: with_expected(message, expected),
            }
        }
        E::UnrecognizedEof { location, expected } => ParseError {
            span: *location..*location,
            message: with_expected("unexpected end of annotation".to_string(), expected),
        },
        E::ExtraToken {
            token: (start, _, end),
        } => ParseError {
            span: *start..*end,
            message: "unexpected text after ')'".to_string(),
        },
        E::InvalidToken { location } => ParseError {
            span: *location..*location,
            message: "unexpected character".to_string(),
        },
        E::User { error } => match *error {},
    }
}

/// Appends `: expected ...` to `message`, naming what the grammar could
/// have accepted.
///
/// The grammar is lenient in places (it accepts a missing `(`, `=` or value
/// so that it can report them precisely), so its list of acceptable tokens
/// can include tokens that would only lead to another error. Where the list
/// shows a token the language really wants there, only that one is named.
fn with_expected(message: String, expected: &[String]) -> String {
    let terminals: Vec<&str> = expected.iter().map(|t| t.trim_matches('"')).collect();
    let has = |t: &str| terminals.contains(&t);
    let wanted: Vec<&str> = if has("(") {
        vec!["'('"]
    } else if has("=") {
        vec!["'='"]
    } else if has("quoted value") {
        vec!["a value"]
    } else {
        [(",", "','"), (")", "')'"), ("name", "a key")]
            .into_iter()
            .filter(|(terminal, _)| has(terminal))
            .map(|(_, name)| name)
            .collect()
    };
    match wanted.split_last() {
        None => message,
        Some((last, [])) => format!("{message}: expected {last}"),
        Some((last, rest)) => format!("{message}: expected {} or {last}", rest.join(", ")),
    }
}
