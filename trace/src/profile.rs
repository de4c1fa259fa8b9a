//! Call-tree profiles: inclusive and exclusive time and calls per calling
//! context, per process and aggregated over processes with the spread
//! across them (minimum, mean, maximum), and their export for Hatchet.
//!
//! The call tree of a process is built from its threads' nested spans
//! (`B`/`E` pairs and `X` events), nested as `summary` nests them: by
//! start, the longer first, a span inside the nearest one still open. A
//! span's exclusive time is its duration less the time its direct children
//! spend inside it. Asynchronous spans (`b`/`e`) do not nest: each is a
//! root whose exclusive time is its whole duration. Spans still open when
//! a trace ended are left out, as `summary` leaves them out. So the sum
//! over every node of one name gives `summary`'s calls, total and self
//! time of that name.
//!
//! [`Profile::hatchet_literal`] writes the form Hatchet's
//! `GraphFrame.from_literal` reads: a list of root nodes, each with a
//! `frame` (`name`, `type`), `metrics` and `children`. Times there are in
//! seconds.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;
use serde_json::{json, Value};

use crate::model::{nesting_order, Workflow};
use crate::summary::micros;

/// A calling context of one process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallNode {
    pub name: String,
    pub calls: u64,
    pub inclusive_ns: i64,
    pub exclusive_ns: i64,
    /// By decreasing inclusive time, then name.
    pub children: Vec<CallNode>,
}

/// The call tree of one process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessProfile {
    /// `host · exe [pid]`, plus ` rank N`.
    pub process: String,
    pub host: String,
    pub pid: i64,
    pub roots: Vec<CallNode>,
}

/// A calling context over every process that has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AggregateNode {
    pub name: String,
    /// Sums over the processes.
    pub calls: u64,
    pub inclusive_ns: i64,
    pub exclusive_ns: i64,
    /// How many processes have this context.
    pub processes: usize,
    /// Inclusive time per process, over the processes that have it.
    pub inclusive_min_ns: i64,
    pub inclusive_mean_ns: f64,
    pub inclusive_max_ns: i64,
    /// Load imbalance, `max / mean` of the inclusive time (1 when even).
    pub imbalance: f64,
    pub children: Vec<AggregateNode>,
}

/// The call-tree profile of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    pub processes: Vec<ProcessProfile>,
    pub aggregate: Vec<AggregateNode>,
}

/// A tree under construction: nodes by (parent, name).
#[derive(Default)]
struct Tree {
    names: Vec<String>,
    values: Vec<(u64, i64, i64)>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    index: HashMap<(Option<usize>, String), usize>,
}

impl Tree {
    fn node(&mut self, parent: Option<usize>, name: &str) -> usize {
        if let Some(&node) = self.index.get(&(parent, name.to_string())) {
            return node;
        }
        let node = self.names.len();
        self.names.push(name.to_string());
        self.values.push((0, 0, 0));
        self.children.push(Vec::new());
        match parent {
            Some(parent) => self.children[parent].push(node),
            None => self.roots.push(node),
        }
        self.index.insert((parent, name.to_string()), node);
        node
    }

    fn build(&self, node: usize) -> CallNode {
        let (calls, inclusive_ns, exclusive_ns) = self.values[node];
        let mut children: Vec<CallNode> = self.children[node]
            .iter()
            .map(|&child| self.build(child))
            .collect();
        sort_nodes(&mut children, |n| (n.inclusive_ns, &n.name));
        CallNode {
            name: self.names[node].clone(),
            calls,
            inclusive_ns,
            exclusive_ns,
            children,
        }
    }
}

fn sort_nodes<T>(nodes: &mut [T], key: impl Fn(&T) -> (i64, &String)) {
    nodes.sort_by(|a, b| {
        let (ia, na) = key(a);
        let (ib, nb) = key(b);
        ib.cmp(&ia).then(na.cmp(nb))
    });
}

/// The call-tree profile of `workflow` (see the module's description).
pub fn profile(workflow: &Workflow) -> Profile {
    let spans = &workflow.spans;
    let mut trees: Vec<Tree> = (0..workflow.processes.len())
        .map(|_| Tree::default())
        .collect();
    let order = nesting_order(workflow, |span| span.end_ns.is_some(), |span| span.start_ns);
    for (thread, thread_spans) in order.iter().enumerate() {
        let tree = &mut trees[workflow.threads[thread].process];
        // (span, its node, its end)
        let mut stack: Vec<(usize, usize, i64)> = Vec::new();
        for &span in thread_spans {
            let (start, end) = (spans[span].start_ns, spans[span].end_ns.unwrap_or(0));
            while stack
                .last()
                .is_some_and(|&(_, _, top_end)| top_end <= start)
            {
                stack.pop();
            }
            let parent = stack.last().map(|&(_, node, _)| node);
            let node = tree.node(parent, &spans[span].name);
            let duration = end - start;
            let value = &mut tree.values[node];
            value.0 += 1;
            value.1 = value.1.saturating_add(duration);
            value.2 = value.2.saturating_add(duration);
            if let Some(&(_, parent_node, parent_end)) = stack.last() {
                // The parent loses the part of this span inside it.
                let inside = duration.min(parent_end - start).max(0);
                tree.values[parent_node].2 -= inside;
            }
            stack.push((span, node, end));
        }
    }
    for span in spans.iter().filter(|span| !span.nested) {
        if let Some(end) = span.end_ns {
            let tree = &mut trees[workflow.threads[span.thread].process];
            let node = tree.node(None, &span.name);
            let value = &mut tree.values[node];
            value.0 += 1;
            value.1 = value.1.saturating_add(end - span.start_ns);
            value.2 = value.2.saturating_add(end - span.start_ns);
        }
    }
    let processes: Vec<ProcessProfile> = trees
        .iter()
        .zip(&workflow.processes)
        .filter(|(tree, _)| !tree.roots.is_empty())
        .map(|(tree, process)| {
            let mut roots: Vec<CallNode> = tree.roots.iter().map(|&r| tree.build(r)).collect();
            sort_nodes(&mut roots, |n| (n.inclusive_ns, &n.name));
            ProcessProfile {
                process: process.name.clone(),
                host: process.host.clone(),
                pid: process.pid,
                roots,
            }
        })
        .collect();
    let aggregate = aggregate(&processes.iter().map(|p| &p.roots[..]).collect::<Vec<_>>());
    Profile {
        processes,
        aggregate,
    }
}

/// Merges sibling lists of several processes by name.
fn aggregate(levels: &[&[CallNode]]) -> Vec<AggregateNode> {
    let mut names: Vec<&String> = levels
        .iter()
        .flat_map(|l| l.iter().map(|n| &n.name))
        .collect();
    names.sort();
    names.dedup();
    let mut nodes: Vec<AggregateNode> = names
        .into_iter()
        .map(|name| {
            let present: Vec<&CallNode> = levels
                .iter()
                .filter_map(|level| level.iter().find(|node| &node.name == name))
                .collect();
            let inclusive: Vec<i64> = present.iter().map(|n| n.inclusive_ns).collect();
            let total: i64 = inclusive.iter().sum();
            let mean = total as f64 / present.len() as f64;
            let max = inclusive.iter().copied().max().unwrap_or(0);
            let children: Vec<&[CallNode]> = present.iter().map(|n| &n.children[..]).collect();
            AggregateNode {
                name: name.clone(),
                calls: present.iter().map(|n| n.calls).sum(),
                inclusive_ns: total,
                exclusive_ns: present.iter().map(|n| n.exclusive_ns).sum(),
                processes: present.len(),
                inclusive_min_ns: inclusive.iter().copied().min().unwrap_or(0),
                inclusive_mean_ns: mean,
                inclusive_max_ns: max,
                imbalance: if mean > 0.0 { max as f64 / mean } else { 1.0 },
                children: aggregate(&children),
            }
        })
        .collect();
    sort_nodes(&mut nodes, |n| (n.inclusive_ns, &n.name));
    nodes
}

fn seconds(ns: i64) -> f64 {
    ns as f64 / 1e9
}

fn literal_node(node: &AggregateNode) -> Value {
    let children: Vec<Value> = node.children.iter().map(literal_node).collect();
    let mut literal = json!({
        "frame": {"name": node.name, "type": "function"},
        "metrics": {
            "time (inc)": seconds(node.inclusive_ns),
            "time": seconds(node.exclusive_ns),
            "calls": node.calls,
            "processes": node.processes,
            "time (inc) min": seconds(node.inclusive_min_ns),
            "time (inc) mean": node.inclusive_mean_ns / 1e9,
            "time (inc) max": seconds(node.inclusive_max_ns),
            "imbalance": node.imbalance,
        },
    });
    // Moved in, not through `json!`, which would copy the whole subtree
    // at every level (time growing with the square of the depth).
    literal["children"] = Value::Array(children);
    literal
}

impl AggregateNode {
    /// A process's node, as an aggregate of that one process.
    fn of_one(node: &CallNode) -> AggregateNode {
        aggregate(&[std::slice::from_ref(node)])
            .pop()
            .expect("one node in, one out")
    }
}

impl Profile {
    /// The aggregate profile in the form `hatchet.GraphFrame.from_literal`
    /// reads. With `by_process`, each process is a root (named after it,
    /// of type `process`) above its own tree instead.
    pub fn hatchet_literal(&self, by_process: bool) -> Value {
        if !by_process {
            return Value::Array(self.aggregate.iter().map(literal_node).collect());
        }
        let roots = self
            .processes
            .iter()
            .map(|process| {
                let children: Vec<AggregateNode> =
                    process.roots.iter().map(AggregateNode::of_one).collect();
                let inclusive: i64 = children.iter().map(|c| c.inclusive_ns).sum();
                let mut root = literal_node(&AggregateNode {
                    name: process.process.clone(),
                    calls: 0,
                    inclusive_ns: inclusive,
                    exclusive_ns: 0,
                    processes: 1,
                    inclusive_min_ns: inclusive,
                    inclusive_mean_ns: inclusive as f64,
                    inclusive_max_ns: inclusive,
                    imbalance: 1.0,
                    children,
                });
                root["frame"]["type"] = json!("process");
                root
            })
            .collect();
        Value::Array(roots)
    }
}

/// Contexts deeper than this are indented as deep as it, their depth
/// written before their name: the table of a deep recursion stays as wide
/// as that of a shallow one.
pub const MAX_INDENT: usize = 32;

/// `name` indented two spaces per level of `depth`.
fn indented(depth: usize, name: &str) -> String {
    if depth <= MAX_INDENT {
        format!("{}{name}", "  ".repeat(depth))
    } else {
        format!("{}[{depth}] {name}", "  ".repeat(MAX_INDENT))
    }
}

/// A table to print: a header, which columns are right-aligned, rows.
struct Table<'a>(&'a [&'a str], &'a [bool], Vec<Vec<String>>);

impl fmt::Display for Table<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::summary::write_table(f, self.0, self.1, &self.2)
    }
}

impl Profile {
    /// The levels of its deepest call tree (0 when it has none).
    pub fn depth(&self) -> usize {
        fn depth_of(nodes: &[CallNode]) -> usize {
            nodes
                .iter()
                .map(|n| 1 + depth_of(&n.children))
                .max()
                .unwrap_or(0)
        }
        self.processes
            .iter()
            .map(|p| depth_of(&p.roots))
            .max()
            .unwrap_or(0)
    }

    /// Each process's call tree as indented text, one context a line.
    pub fn by_process(&self) -> String {
        fn walk(nodes: &[CallNode], depth: usize, rows: &mut Vec<Vec<String>>) {
            for node in nodes {
                rows.push(vec![
                    indented(depth, &node.name),
                    node.calls.to_string(),
                    micros(node.inclusive_ns),
                    micros(node.exclusive_ns),
                ]);
                walk(&node.children, depth + 1, rows);
            }
        }
        let mut text = String::new();
        for process in &self.processes {
            let mut rows = Vec::new();
            walk(&process.roots, 0, &mut rows);
            let table = Table(
                &["context", "calls", "incl (us)", "excl (us)"],
                &[false, true, true, true],
                rows,
            );
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("{}\n{table}", process.process));
        }
        if text.is_empty() {
            text.push_str("no completed spans\n");
        }
        text
    }
}

/// The aggregate tree as indented text, one context a line.
impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.aggregate.is_empty() {
            return writeln!(f, "no completed spans");
        }
        writeln!(
            f,
            "processes: {}; inclusive time per process over the processes that have each context",
            self.processes.len()
        )?;
        writeln!(f)?;
        let mut rows: Vec<Vec<String>> = Vec::new();
        fn walk(nodes: &[AggregateNode], depth: usize, rows: &mut Vec<Vec<String>>) {
            for node in nodes {
                rows.push(vec![
                    indented(depth, &node.name),
                    node.calls.to_string(),
                    micros(node.inclusive_ns),
                    micros(node.exclusive_ns),
                    node.processes.to_string(),
                    micros(node.inclusive_min_ns),
                    micros(node.inclusive_mean_ns.round() as i64),
                    micros(node.inclusive_max_ns),
                    format!("{:.2}", node.imbalance),
                ]);
                walk(&node.children, depth + 1, rows);
            }
        }
        walk(&self.aggregate, 0, &mut rows);
        let table = Table(
            &[
                "context",
                "calls",
                "incl (us)",
                "excl (us)",
                "procs",
                "min (us)",
                "mean (us)",
                "max (us)",
                "max/mean",
            ],
            &[false, true, true, true, true, true, true, true, true],
            rows,
        );
        write!(f, "{table}")
    }
}
