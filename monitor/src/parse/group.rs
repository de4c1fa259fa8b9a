//! Event group files: architecture-specific perf events and the metrics
//! derived from them, in a small text format modelled on LIKWID's groups.
//!
//! ```text
//! # Comment lines start with '#'.
//! SHORT Double-precision FLOP rate
//! CPU AuthenticAMD family=0x17
//! CPU GenuineIntel family=6 model=0x55,0x6a
//! EVENTSET
//! FP_DP     event=0x03,umask=0xf0
//! CYCLES    cycles
//! METRICS
//! DP [MFLOP/s] = 1.0E-06*FP_DP/time
//! FLOP per cycle = FP_DP/CYCLES
//! ```
//!
//! - `SHORT`: one-line description.
//! - `CPU <vendor> family=<n,...> [model=<n,...>]`: the processors the group
//!   applies to (`vendor_id`, `cpu family` and `model` of `/proc/cpuinfo`);
//!   several lines mean any of them. Numbers are decimal or `0x` hex.
//! - `EVENTSET`: one event per line, `<NAME> <spec>`, where `<spec>` is a
//!   generic event name ([`GenericEvent::name`]), `raw=<config>`, or
//!   `event=<code>,umask=<mask>` with the x86 core-PMU encoding
//!   `config = event[7:0] | umask << 8 | event[11:8] << 32`.
//! - `METRICS`: `<name> [<unit>] = <expression>` with `+ - * /`,
//!   parentheses, numbers, event names (the event's count over the
//!   interval) and `time` (the interval in seconds).

use crate::error::ParseError;

/// Events every Linux perf implementation names the same way (the
/// `PERF_TYPE_HARDWARE` and `PERF_TYPE_SOFTWARE` generic events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GenericEvent {
    /// CPU cycles.
    Cycles,
    /// Retired instructions.
    Instructions,
    /// Cache references (usually last-level cache).
    CacheReferences,
    /// Cache misses (usually last-level cache).
    CacheMisses,
    /// Retired branch instructions.
    Branches,
    /// Mispredicted branches.
    BranchMisses,
    /// CPU time of the task in nanoseconds.
    TaskClock,
    /// Context switches.
    ContextSwitches,
    /// Migrations to another CPU.
    CpuMigrations,
    /// Page faults.
    PageFaults,
}

impl GenericEvent {
    /// Every generic event, hardware first.
    pub const ALL: [GenericEvent; 10] = [
        GenericEvent::Cycles,
        GenericEvent::Instructions,
        GenericEvent::CacheReferences,
        GenericEvent::CacheMisses,
        GenericEvent::Branches,
        GenericEvent::BranchMisses,
        GenericEvent::TaskClock,
        GenericEvent::ContextSwitches,
        GenericEvent::CpuMigrations,
        GenericEvent::PageFaults,
    ];

    /// The name used in group files and tracks (as `perf list` spells it).
    pub fn name(self) -> &'static str {
        match self {
            GenericEvent::Cycles => "cycles",
            GenericEvent::Instructions => "instructions",
            GenericEvent::CacheReferences => "cache-references",
            GenericEvent::CacheMisses => "cache-misses",
            GenericEvent::Branches => "branches",
            GenericEvent::BranchMisses => "branch-misses",
            GenericEvent::TaskClock => "task-clock",
            GenericEvent::ContextSwitches => "context-switches",
            GenericEvent::CpuMigrations => "cpu-migrations",
            GenericEvent::PageFaults => "page-faults",
        }
    }

    /// The event named `name`, if it is a generic one.
    pub fn from_name(name: &str) -> Option<GenericEvent> {
        GenericEvent::ALL.into_iter().find(|e| e.name() == name)
    }

    /// True for events counted by the CPU's PMU rather than the kernel.
    pub fn is_hardware(self) -> bool {
        matches!(
            self,
            GenericEvent::Cycles
                | GenericEvent::Instructions
                | GenericEvent::CacheReferences
                | GenericEvent::CacheMisses
                | GenericEvent::Branches
                | GenericEvent::BranchMisses
        )
    }

    /// True for software events that only occur in kernel mode, so that a
    /// counter restricted to user mode always reads zero.
    pub fn kernel_only(self) -> bool {
        matches!(
            self,
            GenericEvent::ContextSwitches | GenericEvent::CpuMigrations
        )
    }
}

/// What a group event counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventSpec {
    /// A generic event.
    Generic(GenericEvent),
    /// A raw PMU event (`PERF_TYPE_RAW`) with this `config`.
    Raw {
        /// The `perf_event_attr.config` value.
        config: u64,
    },
}

/// The x86 core-PMU `config` for an event code and unit mask.
pub fn x86_raw_config(event: u64, umask: u64) -> u64 {
    (event & 0xff) | ((umask & 0xff) << 8) | (((event >> 8) & 0xf) << 32)
}

/// One named event of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupEvent {
    /// The name metrics refer to.
    pub name: String,
    /// What it counts.
    pub spec: EventSpec,
}

/// The processors a group applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuMatch {
    /// `vendor_id`, e.g. `GenuineIntel`, `AuthenticAMD`.
    pub vendor: String,
    /// Accepted `cpu family` values.
    pub families: Vec<u32>,
    /// Accepted `model` values; empty means any model.
    pub models: Vec<u32>,
}

/// An arithmetic expression over event counts and `time`.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal.
    Number(f64),
    /// An event's count over the interval, or `time`.
    Var(String),
    /// Negation.
    Neg(Box<Expr>),
    /// `a op b`.
    Binary(Box<Expr>, char, Box<Expr>),
}

impl Expr {
    /// Evaluates with `var` giving each variable's value; `None` if a value
    /// is missing or a division by zero occurs.
    pub fn eval(&self, var: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
        match self {
            Expr::Number(n) => Some(*n),
            Expr::Var(v) => var(v),
            Expr::Neg(e) => Some(-e.eval(var)?),
            Expr::Binary(a, op, b) => {
                let (a, b) = (a.eval(var)?, b.eval(var)?);
                match op {
                    '+' => Some(a + b),
                    '-' => Some(a - b),
                    '*' => Some(a * b),
                    _ => (b != 0.0).then(|| a / b),
                }
            }
        }
    }
}

/// A derived metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// Its name, e.g. `DP`.
    pub name: String,
    /// Its unit, e.g. `MFLOP/s`, if any.
    pub unit: Option<String>,
    /// How to compute it.
    pub expr: Expr,
}

/// A parsed group file.
#[derive(Debug, Clone, PartialEq)]
pub struct EventGroup {
    /// The group's name (the file name without extension, e.g. `FLOPS_DP`).
    pub name: String,
    /// One-line description.
    pub short: String,
    /// Processors it applies to.
    pub cpus: Vec<CpuMatch>,
    /// Events to count.
    pub events: Vec<GroupEvent>,
    /// Metrics to derive.
    pub metrics: Vec<Metric>,
}

impl EventGroup {
    /// True if the group applies to a processor of this vendor, family and
    /// model.
    pub fn matches(&self, vendor: &str, family: u32, model: u32) -> bool {
        self.cpus.iter().any(|c| {
            c.vendor == vendor
                && c.families.contains(&family)
                && (c.models.is_empty() || c.models.contains(&model))
        })
    }

    /// Evaluates every metric; `count` gives each event's count over the
    /// interval, `time_s` is the interval.
    pub fn evaluate(
        &self,
        count: &dyn Fn(&str) -> Option<f64>,
        time_s: f64,
    ) -> Vec<(String, Option<String>, Option<f64>)> {
        let var = |name: &str| {
            if name == "time" {
                Some(time_s)
            } else {
                count(name)
            }
        };
        self.metrics
            .iter()
            .map(|m| (m.name.clone(), m.unit.clone(), m.expr.eval(&var)))
            .collect()
    }
}

fn int(file: &str, line: usize, text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| ParseError::new(file, line, format!("expected a number, found `{t}`")))
}

fn int_list(file: &str, line: usize, text: &str) -> Result<Vec<u32>, ParseError> {
    text.split(',')
        .map(|t| {
            let n = int(file, line, t)?;
            u32::try_from(n).map_err(|_| ParseError::new(file, line, format!("`{t}` is too large")))
        })
        .collect()
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn parse_cpu(file: &str, line: usize, rest: &str) -> Result<CpuMatch, ParseError> {
    let mut words = rest.split_ascii_whitespace();
    let vendor = words
        .next()
        .ok_or_else(|| ParseError::new(file, line, "CPU: expected a vendor"))?
        .to_string();
    let (mut families, mut models) = (None, Vec::new());
    for w in words {
        match w.split_once('=') {
            Some(("family", v)) => families = Some(int_list(file, line, v)?),
            Some(("model", v)) => models = int_list(file, line, v)?,
            _ => {
                return Err(ParseError::new(
                    file,
                    line,
                    format!("CPU: expected family=... or model=..., found `{w}`"),
                ))
            }
        }
    }
    let families =
        families.ok_or_else(|| ParseError::new(file, line, "CPU: expected family=..."))?;
    Ok(CpuMatch {
        vendor,
        families,
        models,
    })
}

fn parse_event(file: &str, line: usize, text: &str) -> Result<GroupEvent, ParseError> {
    let mut words = text.split_ascii_whitespace();
    let (Some(name), Some(spec), None) = (words.next(), words.next(), words.next()) else {
        return Err(ParseError::new(
            file,
            line,
            "EVENTSET: expected `<NAME> <spec>`",
        ));
    };
    if !is_ident(name) || name == "time" {
        return Err(ParseError::new(
            file,
            line,
            format!("EVENTSET: `{name}` is not a usable event name"),
        ));
    }
    let spec = if let Some(g) = GenericEvent::from_name(spec) {
        EventSpec::Generic(g)
    } else if let Some(raw) = spec.strip_prefix("raw=") {
        EventSpec::Raw {
            config: int(file, line, raw)?,
        }
    } else {
        let (mut event, mut umask) = (None, 0);
        for part in spec.split(',') {
            match part.split_once('=') {
                Some(("event", v)) => event = Some(int(file, line, v)?),
                Some(("umask", v)) => umask = int(file, line, v)?,
                _ => {
                    return Err(ParseError::new(
                        file,
                        line,
                        format!("EVENTSET: unknown event spec `{spec}`"),
                    ))
                }
            }
        }
        let event =
            event.ok_or_else(|| ParseError::new(file, line, "EVENTSET: expected event=<code>"))?;
        if event > 0xfff || umask > 0xff {
            return Err(ParseError::new(
                file,
                line,
                "EVENTSET: event or umask out of range",
            ));
        }
        EventSpec::Raw {
            config: x86_raw_config(event, umask),
        }
    };
    Ok(GroupEvent {
        name: name.to_string(),
        spec,
    })
}

/// Recursive-descent parser for metric expressions.
struct ExprParser<'a> {
    s: &'a [u8],
    pos: usize,
    file: &'a str,
    line: usize,
}

impl ExprParser<'_> {
    fn err(&self, msg: impl Into<String>) -> ParseError {
        ParseError::new(self.file, self.line, msg)
    }

    fn skip_ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn sum(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            e = Expr::Binary(Box::new(e), op as char, Box::new(self.product()?));
        }
        Ok(e)
    }

    fn product(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.unary()?;
        while let Some(op @ (b'*' | b'/')) = self.peek() {
            self.pos += 1;
            e = Expr::Binary(Box::new(e), op as char, Box::new(self.unary()?));
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let e = self.sum()?;
                if self.peek() != Some(b')') {
                    return Err(self.err("expression: expected `)`"));
                }
                self.pos += 1;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => {
                let start = self.pos;
                while let Some(&c) = self.s.get(self.pos) {
                    let exp_sign = (c == b'+' || c == b'-')
                        && matches!(self.s.get(self.pos - 1), Some(b'e' | b'E'));
                    if c.is_ascii_digit() || c == b'.' || c == b'e' || c == b'E' || exp_sign {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                let text = String::from_utf8_lossy(&self.s[start..self.pos]);
                text.parse()
                    .map(Expr::Number)
                    .map_err(|_| self.err(format!("expression: bad number `{text}`")))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while self
                    .s
                    .get(self.pos)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    self.pos += 1;
                }
                Ok(Expr::Var(
                    String::from_utf8_lossy(&self.s[start..self.pos]).into_owned(),
                ))
            }
            Some(c) => Err(self.err(format!("expression: unexpected `{}`", c as char))),
            None => Err(self.err("expression: ends too early")),
        }
    }
}

/// Parses an expression (exposed for tests and tools).
pub fn parse_expr(file: &str, line: usize, text: &str) -> Result<Expr, ParseError> {
    let mut p = ExprParser {
        s: text.as_bytes(),
        pos: 0,
        file,
        line,
    };
    let e = p.sum()?;
    if let Some(c) = p.peek() {
        return Err(p.err(format!("expression: unexpected `{}`", c as char)));
    }
    Ok(e)
}

fn vars(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Number(_) => {}
        Expr::Var(v) => out.push(v.clone()),
        Expr::Neg(a) => vars(a, out),
        Expr::Binary(a, _, b) => {
            vars(a, out);
            vars(b, out);
        }
    }
}

fn parse_metric(
    file: &str,
    line: usize,
    text: &str,
    events: &[GroupEvent],
) -> Result<Metric, ParseError> {
    let (head, expr_text) = text.split_once('=').ok_or_else(|| {
        ParseError::new(
            file,
            line,
            "METRICS: expected `<name> [<unit>] = <expression>`",
        )
    })?;
    let head = head.trim();
    let (name, unit) = match head.split_once('[') {
        Some((n, rest)) => {
            let unit = rest
                .strip_suffix(']')
                .ok_or_else(|| ParseError::new(file, line, "METRICS: unit lacks `]`"))?;
            (n.trim(), Some(unit.trim().to_string()))
        }
        None => (head, None),
    };
    if name.is_empty() {
        return Err(ParseError::new(file, line, "METRICS: metric has no name"));
    }
    let expr = parse_expr(file, line, expr_text)?;
    let mut used = Vec::new();
    vars(&expr, &mut used);
    for v in used {
        if v != "time" && !events.iter().any(|e| e.name == v) {
            return Err(ParseError::new(
                file,
                line,
                format!("METRICS: `{v}` is neither an event of the group nor `time`"),
            ));
        }
    }
    Ok(Metric {
        name: name.to_string(),
        unit,
        expr,
    })
}

/// Parses a group file. `name` is the group's name; `file` names the file
/// in errors.
pub fn parse(name: &str, file: &str, text: &str) -> Result<EventGroup, ParseError> {
    #[derive(PartialEq)]
    enum Section {
        Head,
        Events,
        Metrics,
        Long,
    }
    let mut g = EventGroup {
        name: name.to_string(),
        short: String::new(),
        cpus: Vec::new(),
        events: Vec::new(),
        metrics: Vec::new(),
    };
    let mut section = Section::Head;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if section == Section::Long {
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line {
            "EVENTSET" => {
                section = Section::Events;
                continue;
            }
            "METRICS" => {
                section = Section::Metrics;
                continue;
            }
            "LONG" => {
                section = Section::Long;
                continue;
            }
            _ => {}
        }
        let (first, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match (&section, first) {
            (_, "SHORT") => g.short = rest.trim().to_string(),
            (_, "CPU") => g.cpus.push(parse_cpu(file, n, rest)?),
            (Section::Events, _) => {
                let ev = parse_event(file, n, line)?;
                if g.events.iter().any(|e| e.name == ev.name) {
                    return Err(ParseError::new(
                        file,
                        n,
                        format!("EVENTSET: `{}` is defined twice", ev.name),
                    ));
                }
                g.events.push(ev);
            }
            (Section::Metrics, _) => g.metrics.push(parse_metric(file, n, line, &g.events)?),
            _ => {
                return Err(ParseError::new(
                    file,
                    n,
                    format!("expected SHORT, CPU, EVENTSET, METRICS or LONG, found `{first}`"),
                ))
            }
        }
    }
    let end = text.lines().count() + 1;
    if g.events.is_empty() {
        return Err(ParseError::new(
            file,
            end,
            "the group has no EVENTSET entries",
        ));
    }
    if g.cpus.is_empty() {
        return Err(ParseError::new(file, end, "the group has no CPU line"));
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUP: &str = "# test group\nSHORT Double-precision FLOP rate\nCPU AuthenticAMD family=0x17\nCPU GenuineIntel family=6 model=0x55,0x6a\nEVENTSET\nFP_DP   event=0x03,umask=0xf0\nCYCLES  cycles\nBIG     event=0x1c7,umask=0x01\nRAW     raw=0x530110\nMETRICS\nDP [MFLOP/s] = 1.0E-06*FP_DP/time\nFLOP per cycle = FP_DP/CYCLES\nMixed [1] = -(RAW - 2*BIG) / (1 + 1)\nLONG\nAnything at all: = [ ( goes here.\n";

    #[test]
    fn a_group_file_gives_cpus_events_and_metrics() {
        let g = parse("FLOPS_DP", "groups/x/FLOPS_DP.txt", GROUP).unwrap();
        assert_eq!(g.short, "Double-precision FLOP rate");
        assert!(g.matches("AuthenticAMD", 0x17, 1));
        assert!(g.matches("GenuineIntel", 6, 0x6a));
        assert!(!g.matches("GenuineIntel", 6, 0x8f));
        assert!(!g.matches("AuthenticAMD", 0x19, 1));
        assert_eq!(g.events[0].spec, EventSpec::Raw { config: 0xf003 });
        assert_eq!(g.events[1].spec, EventSpec::Generic(GenericEvent::Cycles));
        assert_eq!(
            g.events[2].spec,
            EventSpec::Raw {
                config: 0x1_0000_01c7
            }
        );
        assert_eq!(g.events[3].spec, EventSpec::Raw { config: 0x530110 });
        assert_eq!(g.metrics.len(), 3);
        assert_eq!(g.metrics[0].unit.as_deref(), Some("MFLOP/s"));
        assert_eq!(g.metrics[1].name, "FLOP per cycle");
        assert_eq!(g.metrics[1].unit, None);
    }

    #[test]
    fn metrics_derive_from_interval_counts_and_time() {
        let g = parse("FLOPS_DP", "f", GROUP).unwrap();
        let counts = |n: &str| match n {
            "FP_DP" => Some(4.0e9),
            "CYCLES" => Some(2.0e9),
            "BIG" => Some(3.0),
            "RAW" => Some(10.0),
            _ => None,
        };
        let m = g.evaluate(&counts, 2.0);
        assert_eq!(m[0], ("DP".into(), Some("MFLOP/s".into()), Some(2000.0)));
        assert_eq!(m[1].2, Some(2.0));
        assert_eq!(m[2].2, Some(-2.0));
    }

    #[test]
    fn a_metric_over_a_zero_count_is_none_not_infinite() {
        let g = parse("FLOPS_DP", "f", GROUP).unwrap();
        let m = g.evaluate(&|n| if n == "CYCLES" { Some(0.0) } else { Some(1.0) }, 1.0);
        assert_eq!(m[1].2, None);
    }

    #[test]
    fn a_metric_naming_an_unknown_event_is_an_error_naming_the_line() {
        let text = "CPU GenuineIntel family=6\nEVENTSET\nA cycles\nMETRICS\nX = A/B\n";
        let e = parse("G", "groups/G.txt", text).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("groups/G.txt", 5));
        assert!(e.message.contains("`B`"), "{e}");
    }

    #[test]
    fn an_unbalanced_expression_is_an_error() {
        let text = "CPU GenuineIntel family=6\nEVENTSET\nA cycles\nMETRICS\nX = (A/time\n";
        let e = parse("G", "g", text).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.contains("`)`"), "{e}");
    }

    #[test]
    fn an_unknown_event_spec_is_an_error() {
        let text = "CPU GenuineIntel family=6\nEVENTSET\nA l1d-misses\n";
        let e = parse("G", "g", text).unwrap_err();
        assert_eq!(e.line, 3);
    }

    #[test]
    fn a_group_without_cpu_line_is_an_error() {
        let e = parse("G", "g", "EVENTSET\nA cycles\n").unwrap_err();
        assert!(e.message.contains("CPU"), "{e}");
    }

    #[test]
    fn generic_event_names_round_trip() {
        for e in GenericEvent::ALL {
            assert_eq!(GenericEvent::from_name(e.name()), Some(e));
        }
    }
}
