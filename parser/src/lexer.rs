//! Adapter from the logos token stream to the `(start, token, end)` triples
//! that the generated LALRPOP parser consumes.
//!
//! Lexer errors never stop the parse: they become [`Token::Stray`] and
//! [`Token::Unterminated`] tokens, which no grammar rule accepts except the
//! error-recovery and trailing-text rules, so the grammar reports them in
//! context and carries on.

use std::convert::Infallible;

use logos::Logos;

use crate::tokens::{LexError, Token};

/// One item for the parser: a token with its byte span.
pub type Spanned<'a> = Result<(usize, Token<'a>, usize), Infallible>;

/// Token iterator over an annotation string.
pub struct Lexer<'a> {
    inner: logos::Lexer<'a, Token<'a>>,
}

impl<'a> Lexer<'a> {
    /// Starts lexing `input` from its first byte.
    pub fn new(input: &'a str) -> Self {
        Lexer {
            inner: Token::lexer(input),
        }
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Spanned<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let result = self.inner.next()?;
        let span = self.inner.span();
        let token = match result {
            Ok(token) => token,
            Err(LexError::UnterminatedQuote) => Token::Unterminated(self.inner.slice()),
            // Logos reports unmatched input a whole character at a time,
            // so the span stays on character boundaries.
            Err(LexError::Stray) => Token::Stray(
                self.inner
                    .slice()
                    .chars()
                    .next()
                    .unwrap_or(char::REPLACEMENT_CHARACTER),
            ),
        };
        Some(Ok((span.start, token, span.end)))
    }
}

/// Collects every token of `input`; used to look at the annotation name
/// before running the grammar.
pub fn tokens(input: &str) -> Vec<(usize, Token<'_>, usize)> {
    Lexer::new(input).filter_map(Result::ok).collect()
}
