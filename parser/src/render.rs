//! Human-readable rendering of errors under the input text.

use std::fmt::Write;

use crate::ParseError;

/// Formats `errors` for people: each message, followed by the line of
/// `input` it is about with the span underlined by carets.
///
/// ```text
/// error: unknown flow 'sideways': expected one of in, out, inout, outin
///  --> 1:21
///   |
/// 1 | @critical_path(flow=sideways)
///   |                     ^^^^^^^^
/// ```
///
/// Line and column are 1-based and count characters. Errors are separated by
/// a blank line; the result ends with a newline unless `errors` is empty.
pub fn render_errors(input: &str, errors: &[ParseError]) -> String {
    let line_count = input.split('\n').count();
    let gutter = " ".repeat(line_count.to_string().len());
    let mut out = String::new();
    for (i, error) in errors.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let start = floor_boundary(input, error.span.start);
        let end = floor_boundary(input, error.span.end).max(start);

        let line_start = input[..start].rfind('\n').map_or(0, |at| at + 1);
        let line_end = input[start..]
            .find('\n')
            .map_or(input.len(), |at| start + at);
        let line = input[line_start..line_end].trim_end_matches('\r');
        let line_no = input[..line_start].matches('\n').count() + 1;
        let before = &input[line_start..start];
        let column = before.chars().count() + 1;

        // Keep tabs so the carets line up with the text above them.
        let pad: String = before
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let marked = input[start..end.min(line_end)].chars().count().max(1);

        let _ = writeln!(out, "error: {}", error.message);
        let _ = writeln!(out, "{gutter}--> {line_no}:{column}");
        let _ = writeln!(out, "{gutter} |");
        let _ = writeln!(out, "{line_no:>width$} | {line}", width = gutter.len());
        let _ = writeln!(out, "{gutter} | {pad}{}", "^".repeat(marked));
    }
    out
}

/// The largest character boundary of `text` at or before `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
