//! Compiler diagnostics in the `file:line: severity: perfflow: …` form that
//! editors and build logs recognise.

use std::fmt;

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

/// One malformed-annotation diagnostic.
pub struct Diagnostic<'a> {
    pub file: &'a str,
    pub line: u32,
    pub severity: Severity,
    pub message: &'a str,
    pub annotation: &'a str,
    pub function: &'a str,
}

impl fmt::Display for Diagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = if self.file.is_empty() {
            "<unknown>"
        } else {
            self.file
        };
        write!(
            f,
            "{file}:{}: {}: perfflow: {} in '{}' on function {}",
            self.line, self.severity, self.message, self.annotation, self.function
        )
    }
}
