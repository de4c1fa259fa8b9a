//! Filter files: which functions to trace without editing their sources.
//!
//! The weaver reads one at compile time (`PERFFLOW_WEAVE_FILTER=file`), and
//! the runtime's `-finstrument-functions` hooks read the same file at run
//! time. One rule per line; `#` starts a comment:
//!
//! ```text
//! # action  target    pattern               aspect (include only; optional)
//! include   function  'physics::*'          @critical_path(scope='solver')
//! include   function  read_block            @critical_path(pointcut='before')
//! exclude   function  '*::helper*'
//! include   file      src/io/*.c
//! exclude   file      '*/third_party/*'
//! ```
//!
//! - `function` patterns are matched against the demangled name the trace
//!   shows (`physics::Solver::step`, `accumulate<int>`, a C name as is).
//! - `file` patterns are matched against the source file as the compiler was
//!   given it. A pattern without `/` is matched against the file name alone;
//!   one with `/` against the whole path or any part of it that starts after
//!   a `/` (so `src/io/*.c` matches `/home/me/app/src/io/disk.c`).
//! - Patterns are globs: `*` is any run of characters (`/` and `:` included),
//!   `?` one character, `[abc]` one of a set (`[[]` is a literal `[`). A
//!   pattern with spaces is quoted with `'` or `"`.
//! - A function is selected when an `include` rule matches it (by name or
//!   file) and no `exclude` rule does: exclusion wins. The first matching
//!   `include` rule gives the aspect, `@critical_path()` (around) when it
//!   names none. Annotations in the source are not the filter's business:
//!   the weaver weaves an annotated function as its annotation says.
//!
//! Parsing is separate from reading: [`Filter::parse`] takes text, and
//! [`Filter::load`] reads a file and names it in every message.

use std::fmt;
use std::path::Path;

use glob::{MatchOptions, Pattern};

use crate::{parse_annotation, Annotation, Aspect};

/// The largest filter file read: a filter that lists every function of a
/// large code base by name stays far below it.
const MAX_FILTER_BYTES: u64 = 16 << 20;

/// What a rule does to what it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Include,
    Exclude,
}

/// What a rule's pattern is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The demangled function name.
    Function,
    /// The source file.
    File,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Target::Function => "function",
            Target::File => "file",
        })
    }
}

/// One line of a filter file.
#[derive(Debug, Clone)]
pub struct Rule {
    /// 1-based line number in the file.
    pub line: u32,
    pub action: Action,
    pub target: Target,
    /// The pattern as written, without quotes.
    pub pattern: String,
    /// The aspect of an `include` rule; `None` means `@critical_path()`.
    pub aspect: Option<Aspect>,
    glob: Pattern,
}

impl Rule {
    fn matches(&self, name: &str, file: Option<&str>) -> bool {
        let options = MatchOptions {
            case_sensitive: true,
            require_literal_separator: false,
            require_literal_leading_dot: false,
        };
        match self.target {
            Target::Function => self.glob.matches_with(name, options),
            Target::File => {
                let Some(file) = file else { return false };
                if !self.pattern.contains('/') {
                    let base = file.rsplit('/').next().unwrap_or(file);
                    return self.glob.matches_with(base, options);
                }
                std::iter::once(file)
                    .chain(file.match_indices('/').map(|(i, _)| &file[i + 1..]))
                    .any(|tail| self.glob.matches_with(tail, options))
            }
        }
    }

    /// `line 3 (function 'solve*')`, for messages.
    pub fn describe(&self) -> String {
        format!("line {} ({} '{}')", self.line, self.target, self.pattern)
    }
}

/// One problem in a filter file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub line: u32,
    pub message: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// What the filter says about one function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The aspect to trace the function with, `None` when it is not selected.
    pub aspect: Option<Aspect>,
    /// Indexes (into [`Filter::rules`]) of every rule that matched, chosen or
    /// not: what diagnostics of rules that match nothing are built from.
    pub matched: Vec<usize>,
}

/// A parsed filter file.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub rules: Vec<Rule>,
}

impl Filter {
    /// Parses the text of a filter file, reporting every bad line.
    pub fn parse(text: &str) -> Result<Filter, Vec<FilterError>> {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
            match parse_line(raw) {
                Ok(None) => {}
                Ok(Some(parts)) => match build_rule(line, parts) {
                    Ok(rule) => rules.push(rule),
                    Err(message) => errors.push(FilterError { line, message }),
                },
                Err(message) => errors.push(FilterError { line, message }),
            }
        }
        if errors.is_empty() {
            Ok(Filter { rules })
        } else {
            Err(errors)
        }
    }

    /// Reads and parses the filter file at `path`. The error is one message,
    /// a line per problem, each naming the file.
    pub fn load(path: &Path) -> Result<Filter, String> {
        use std::io::Read;
        let cannot = |err: &dyn std::fmt::Display| {
            format!("cannot read filter file {}: {err}", path.display())
        };
        // A FIFO or a device (`/dev/zero`) would hang the compiler or fill
        // its memory: only a regular file of a bounded size is read.
        let meta = std::fs::metadata(path).map_err(|err| cannot(&err))?;
        if !meta.is_file() {
            return Err(cannot(&"expected a regular file"));
        }
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_FILTER_BYTES + 1).read_to_string(&mut text))
            .map_err(|err| cannot(&err))?;
        if text.len() as u64 > MAX_FILTER_BYTES {
            return Err(cannot(&format_args!(
                "larger than {} MiB; expected a list of rules",
                MAX_FILTER_BYTES >> 20
            )));
        }
        Filter::parse(&text).map_err(|errors| {
            errors
                .iter()
                .map(|e| format!("{}:{}: {}", path.display(), e.line, e.message))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    /// Whether and how to trace the function `name` defined in `file`
    /// (`None` when the file is not known: `file` rules then match nothing).
    pub fn decide(&self, name: &str, file: Option<&str>) -> Decision {
        let matched: Vec<usize> = (0..self.rules.len())
            .filter(|&i| self.rules[i].matches(name, file))
            .collect();
        let excluded = matched
            .iter()
            .any(|&i| self.rules[i].action == Action::Exclude);
        let aspect = if excluded {
            None
        } else {
            matched
                .iter()
                .map(|&i| &self.rules[i])
                .find(|r| r.action == Action::Include)
                .map(|r| r.aspect.clone().unwrap_or_default())
        };
        Decision { aspect, matched }
    }

    /// Whether any rule matches on the source file.
    pub fn has_file_rules(&self) -> bool {
        self.rules.iter().any(|r| r.target == Target::File)
    }
}

/// The words of one line: action, target, pattern, and the rest.
struct Parts<'a> {
    action: &'a str,
    target: &'a str,
    pattern: String,
    rest: &'a str,
}

/// Splits a line; `Ok(None)` for blank lines and comments.
fn parse_line(raw: &str) -> Result<Option<Parts<'_>>, String> {
    let line = raw.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let (action, rest) = split_word(line);
    let (target, rest) = split_word(rest);
    if target.is_empty() {
        return Err(format!(
            "expected `include` or `exclude`, then `function` or `file`, then a pattern; found `{line}`"
        ));
    }
    let rest = rest.trim_start();
    let (pattern, rest) = match rest.chars().next() {
        Some(quote @ ('\'' | '"')) => match rest[1..].find(quote) {
            Some(end) => (rest[1..1 + end].to_string(), &rest[2 + end..]),
            None => return Err(format!("the pattern's {quote} is never closed")),
        },
        Some(_) => {
            let (word, rest) = split_word(rest);
            (word.to_string(), rest)
        }
        None => return Err(format!("no pattern after `{action} {target}`")),
    };
    let rest = rest.trim();
    // A comment may end a line, unless it is inside the annotation's quotes.
    let rest = if rest.starts_with('#') { "" } else { rest };
    Ok(Some(Parts {
        action,
        target,
        pattern,
        rest,
    }))
}

fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    (&text[..end], &text[end..])
}

fn build_rule(line: u32, parts: Parts) -> Result<Rule, String> {
    let action = match parts.action {
        "include" => Action::Include,
        "exclude" => Action::Exclude,
        other => return Err(format!("expected `include` or `exclude`, found `{other}`")),
    };
    let target = match parts.target {
        "function" => Target::Function,
        "file" => Target::File,
        other => return Err(format!("expected `function` or `file`, found `{other}`")),
    };
    if parts.pattern.is_empty() {
        return Err("the pattern is empty".to_string());
    }
    let glob = Pattern::new(&parts.pattern)
        .map_err(|err| format!("bad pattern '{}': {}", parts.pattern, err.msg))?;
    let aspect = match (action, parts.rest) {
        (_, "") => None,
        (Action::Exclude, rest) => {
            return Err(format!(
                "an exclude rule takes no aspect; found `{rest}` after the pattern"
            ))
        }
        (Action::Include, rest) => match parse_annotation(rest) {
            Annotation::Aspect(aspect) => Some(aspect),
            Annotation::Foreign => {
                return Err(format!(
                    "expected an aspect such as @critical_path(pointcut='around') after the pattern, found `{rest}`"
                ))
            }
            Annotation::Invalid(errors) => {
                let problems: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
                return Err(format!("{rest}: {}", problems.join("; ")));
            }
        },
    };
    Ok(Rule {
        line,
        action,
        target,
        pattern: parts.pattern,
        aspect,
        glob,
    })
}
