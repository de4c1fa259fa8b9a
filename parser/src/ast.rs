//! Raw syntax tree built by the grammar, before any meaning is checked.
//!
//! The grammar accepts a deliberately loose shape (parentheses may be
//! missing, `=` or the value may be missing) so that it can describe what
//! went wrong precisely; [`crate::validate`] turns this tree into an
//! [`crate::Aspect`] or a list of errors.

use std::ops::Range;

use crate::ParseError;

/// A byte range into the annotation string.
pub type Span = Range<usize>;

/// The whole annotation as written.
#[derive(Debug, Clone)]
pub struct RawAnnotation<'a> {
    /// The annotation name after `@`, e.g. `critical_path`.
    pub name: Span,
    /// The opening parenthesis, if present.
    pub open: Option<Span>,
    /// The arguments in source order.
    pub args: Vec<RawArg<'a>>,
    /// The closing parenthesis, if present.
    pub close: Option<Span>,
    /// Tokens after the closing parenthesis, if any.
    pub trailing: Option<Span>,
    /// Where the last token ends.
    pub end: usize,
}

/// One comma-separated argument slot.
#[derive(Debug, Clone)]
pub enum RawArg<'a> {
    /// Something of the form `key = value`, possibly missing its `=` or value.
    Pair {
        /// The key word.
        key: Word<'a>,
        /// The `=` sign, if present.
        eq: Option<Span>,
        /// The value, if present.
        value: Option<Value<'a>>,
    },
    /// A slot the grammar could not make sense of; recovery skipped ahead to
    /// the next `,` or `)`.
    Broken(ParseError),
}

/// A bare word with its span.
#[derive(Debug, Clone)]
pub struct Word<'a> {
    pub text: &'a str,
    pub span: Span,
}

/// A value as written.
#[derive(Debug, Clone)]
pub struct Value<'a> {
    pub kind: ValueKind,
    /// The source text, quotes included for quoted values.
    pub text: &'a str,
    pub span: Span,
}

/// How a value was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A bare word such as `around`.
    Bare,
    /// A quoted value such as `'around'`.
    Quoted,
    /// A quote that is never closed; it runs to the end of the input.
    Unterminated,
}
