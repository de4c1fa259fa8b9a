//! Compiler diagnostics in the `file:line: severity: perfflow: …` form that
//! editors and build logs recognise.
//!
//! One diagnostic per annotation, of bounded length whatever the annotation:
//! at most [`MAX_PROBLEMS`] distinct problems are listed, a repeated one
//! with its count (then "and N more"), each cut at [`MAX_PROBLEM_CHARS`],
//! and the annotation is quoted up to
//! [`MAX_QUOTED_CHARS`], with an ellipsis where text was left out.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// Problems listed in one diagnostic.
pub const MAX_PROBLEMS: usize = 4;
/// Characters of one problem's description.
pub const MAX_PROBLEM_CHARS: usize = 160;
/// Characters of the annotation quoted.
pub const MAX_QUOTED_CHARS: usize = 120;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One diagnostic about one annotation on one function.
pub struct Diagnostic<'a> {
    pub file: &'a str,
    pub line: u32,
    pub severity: Severity,
    /// What is wrong, one entry per problem; never empty.
    pub problems: &'a [&'a str],
    pub annotation: &'a str,
    pub function: &'a str,
}

impl Diagnostic<'_> {
    /// Prints the diagnostic on stderr.
    pub fn emit(&self) {
        eprintln!("{self}");
    }
}

impl fmt::Display for Diagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = if self.file.is_empty() {
            "<unknown>"
        } else {
            self.file
        };
        write!(f, "{file}:{}: {}: perfflow: ", self.line, self.severity)?;
        if self.problems.len() > 1 {
            write!(f, "{} problems: ", self.problems.len())?;
        }
        // Distinct problems in order of first appearance, with their counts.
        let mut distinct: Vec<(&str, usize)> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for &problem in self.problems {
            let i = *index.entry(problem).or_insert_with(|| {
                distinct.push((problem, 0));
                distinct.len() - 1
            });
            distinct[i].1 += 1;
        }
        let mut shown = 0;
        for (i, (problem, n)) in distinct.iter().take(MAX_PROBLEMS).enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            f.write_str(&shorten(problem, MAX_PROBLEM_CHARS))?;
            if *n > 1 {
                write!(f, " ({n} times)")?;
            }
            shown += n;
        }
        if self.problems.len() > shown {
            write!(f, "; and {} more", self.problems.len() - shown)?;
        }
        write!(
            f,
            " in '{}' on function {}",
            shorten(self.annotation, MAX_QUOTED_CHARS),
            self.function
        )
    }
}

/// `text` cut to at most `max` characters, ending in `…` where cut.
pub fn shorten(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((end, _)) if text[end..].chars().nth(1).is_some() => {
            Cow::Owned(format!("{}…", &text[..end]))
        }
        _ => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_longer_than_the_bound_is_cut_with_an_ellipsis() {
        assert_eq!(shorten("abcdef", 6), "abcdef");
        assert_eq!(shorten("abcdefg", 6), "abcde…");
        assert_eq!(shorten("ééééééé", 3).chars().count(), 3);
        assert_eq!(shorten("", 3), "");
    }

    #[test]
    fn a_repeated_problem_is_listed_once_with_its_count() {
        let d = Diagnostic {
            file: "a.c",
            line: 3,
            severity: Severity::Error,
            problems: &["dup", "other", "dup", "dup"],
            annotation: "@critical_path()",
            function: "f",
        };
        assert_eq!(
            d.to_string(),
            "a.c:3: error: perfflow: 4 problems: dup (3 times); other \
             in '@critical_path()' on function f"
        );
    }

    #[test]
    fn many_problems_are_listed_up_to_the_bound_then_counted() {
        let problems: Vec<String> = (0..10).map(|i| format!("problem {i}")).collect();
        let problems: Vec<&str> = problems.iter().map(String::as_str).collect();
        let d = Diagnostic {
            file: "a.c",
            line: 3,
            severity: Severity::Warning,
            problems: &problems,
            annotation: "@critical_path()",
            function: "f",
        };
        assert_eq!(
            d.to_string(),
            "a.c:3: warning: perfflow: 10 problems: problem 0; problem 1; problem 2; \
             problem 3; and 6 more in '@critical_path()' on function f"
        );
    }
}
