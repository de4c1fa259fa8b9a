//! Token definitions for the annotation lexer.

use std::fmt;

use logos::{Lexer, Logos};

/// What can go wrong while splitting an annotation into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LexError {
    /// A character that starts no token.
    #[default]
    Stray,
    /// A `'` with no matching closing `'` before the end of the input.
    UnterminatedQuote,
}

/// One token of an annotation string.
///
/// Whitespace (any Unicode white space) separates tokens and is dropped.
/// The last two variants are never produced by the logos state machine
/// itself: the adapter in [`crate::lexer`] creates them from lexer errors so
/// the grammar can recover from them like from any other unexpected token.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(error = LexError)]
#[logos(skip r"\s+")]
pub enum Token<'a> {
    #[token("@")]
    At,
    #[token(".")]
    Dot,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("=")]
    Eq,
    #[token(",")]
    Comma,
    /// A bare word (letters, digits and `_`):
    /// annotation names, keys and unquoted values.
    #[regex(r"[\p{L}\p{N}_][\p{L}\p{M}\p{N}_]*", |lex| lex.slice())]
    Ident(&'a str),
    /// A complete quoted value, quotes and escapes included verbatim.
    #[token("'", quoted)]
    Quoted(&'a str),
    /// A quoted value that runs to the end of the input, opening quote included.
    Unterminated(&'a str),
    /// A character that starts no token.
    Stray(char),
}

/// Scans the rest of a quoted value after its opening `'`.
///
/// A backslash always takes the next character with it, so `\'` never ends
/// the value; escapes are checked later, when the value is decoded.
fn quoted<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<&'a str, LexError> {
    let rest = lex.remainder();
    let mut chars = rest.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' => {
                lex.bump(at + 1);
                return Ok(lex.slice());
            }
            _ => {}
        }
    }
    lex.bump(rest.len());
    Err(LexError::UnterminatedQuote)
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::At => f.write_str("'@'"),
            Token::Dot => f.write_str("'.'"),
            Token::LParen => f.write_str("'('"),
            Token::RParen => f.write_str("')'"),
            Token::Eq => f.write_str("'='"),
            Token::Comma => f.write_str("','"),
            Token::Ident(text) => write!(f, "'{text}'"),
            Token::Quoted(text) => write!(f, "quoted value {text}"),
            Token::Unterminated(_) => f.write_str("unterminated quote"),
            Token::Stray(c) => write!(f, "character {c:?}"),
        }
    }
}
