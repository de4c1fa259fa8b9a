//! The JSON writer builds event lines from cached pieces (site prefixes in
//! a small cache by site address, the thread id and millisecond of the last
//! event, whole-array copies), through `Sink::event` and the decoder's
//! `Sink::slice_begin` and `Sink::slice_end`. Here many sites (more than the cache holds,
//! so slots are shared and refilled), several threads, stamps that cross
//! seconds and the first millisecond of the epoch, every phase, names that need
//! escaping and names longer than the pieces copied whole are written, and
//! the file must be exactly what formatting every field of every event
//! with `format!` and `serde_json` gives.

use std::ffi::CString;

use perfflow_runtime::decode::{Phase, TraceEvent};
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::{ChromeJsonWriter, Sink};
use serde_json::Value;

/// A deterministic stream of numbers (64-bit LCG, top bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 16
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn leak(text: String) -> &'static std::ffi::CStr {
    Box::leak(CString::new(text).expect("no NUL").into_boxed_c_str())
}

/// `count` sites, leaked as the runtime's own site copies are, with names
/// that need escaping, names of a few hundred bytes, and async sites.
fn sites(count: usize) -> Vec<&'static Site> {
    (0..count)
        .map(|i| {
            let name = match i % 5 {
                0 => format!("fn_{i}"),
                1 => format!("say \"{i}\" \\ to\n\tthe\x01world"),
                2 => format!(
                    "ns::Type<{}>::method_{i}",
                    "long_template_argument,".repeat(12)
                ),
                3 => format!("f\u{e9}te_{i}"),
                _ => format!("g{i}"),
            };
            let pointcut = if i % 7 == 0 {
                Pointcut::AroundAsync
            } else {
                Pointcut::Around
            };
            let site = Site::new(
                pointcut,
                Flow::None,
                leak(name.clone()),
                leak(format!("src/file_{}.cpp", i % 13)),
                Some(leak(format!("scope_{}", i % 3))),
                leak(name),
            );
            &*Box::leak(Box::new(site))
        })
        .collect()
}

fn json_string(bytes: &[u8]) -> String {
    serde_json::to_string(&String::from_utf8_lossy(bytes)).expect("a string serializes")
}

/// A Chrome `ts` in microseconds with three decimals.
fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// The line the writer must produce for `ev`, without the separator.
fn expected_line(pid: u32, ev: &TraceEvent<'_>) -> String {
    let site = ev.site;
    let cat = if site.pointcut().is_async() {
        site.scope().unwrap_or(b"default")
    } else {
        site.file()
    };
    let head = format!(
        "{{\"name\":{},\"cat\":{},\"pid\":{pid},\"tid\":{},\"ts\":{}",
        json_string(site.name()),
        json_string(cat),
        ev.tid,
        micros(ev.ts_ns)
    );
    let rest = match ev.phase {
        Phase::Begin => ",\"ph\":\"B\"}".to_string(),
        Phase::End => ",\"ph\":\"E\"}".to_string(),
        Phase::Instant => ",\"ph\":\"i\",\"s\":\"t\"}".to_string(),
        Phase::AsyncBegin(id) => format!(",\"ph\":\"b\",\"id\":{id}}}"),
        Phase::AsyncEnd(id) => format!(",\"ph\":\"e\",\"id\":{id}}}"),
        Phase::AsyncInstant(id) => format!(",\"ph\":\"n\",\"id\":{id}}}"),
        Phase::Complete(dur) => format!(",\"ph\":\"X\",\"dur\":{}}}", micros(dur)),
        Phase::FlowStart(_) | Phase::FlowEnd(_) => unreachable!("not generated here"),
    };
    head + &rest
}

#[test]
fn json_event_lines_match_a_plain_formatting_of_their_fields() {
    let pid = 4_000_123;
    let sites = sites(700);
    let tids = [1, 42, 4_000_123, 4_294_967_295];
    let mut rng = Lcg(7);
    let mut w = ChromeJsonWriter::new(Vec::new(), pid);
    let mut lines = Vec::new();
    let mut ts_ns: u64 = 1_700_000_000_999_000_000;
    // Enough events to cross the writer's flush threshold a few times.
    for i in 0..60_000u64 {
        // Mostly the same few sites and threads in runs, as real traces
        // are, with jumps to any of them.
        let site = if rng.below(4) == 0 {
            sites[rng.below(sites.len() as u64) as usize]
        } else {
            sites[(i / 50 % 5) as usize]
        };
        let tid = tids[(i / 200 % tids.len() as u64) as usize];
        ts_ns = match rng.below(100) {
            // Within the first second of the epoch, as tests stamp events.
            0 => rng.below(1_000_000_000),
            1 => rng.below(5_000_000_000),
            2 => u64::MAX - rng.below(1_000_000),
            3 => rng.below(3_000_000),
            _ => ts_ns.saturating_add(rng.below(2_000_000)),
        };
        let id = rng.next();
        let phase = match rng.below(10) {
            0 => Phase::Instant,
            1 => Phase::AsyncBegin(id),
            2 => Phase::AsyncEnd(id),
            3 => Phase::AsyncInstant(id),
            4 => Phase::Complete(rng.below(3_000_000_000)),
            5 | 6 => Phase::End,
            _ => Phase::Begin,
        };
        let ev = TraceEvent {
            site,
            tid,
            ts_ns,
            phase,
        };
        lines.push(expected_line(pid, &ev));
        // Slice begins and ends also come through the calls the decoder's
        // common case makes.
        match (ev.phase, i % 2) {
            (Phase::Begin, 0) => w.slice_begin(site, tid, ts_ns),
            (Phase::End, 0) => w.slice_end(site, tid, ts_ns),
            _ => w.event(&ev),
        }
        if !(10_000_000_000..=u64::MAX / 2).contains(&ts_ns) {
            ts_ns = 1_700_000_000_999_000_000 + i * 1_000_000;
        }
    }
    w.finish().expect("writing into memory cannot fail");
    let text = String::from_utf8(w.into_inner()).expect("output is UTF-8");
    let expected = format!("[\n{}\n]\n", lines.join(",\n"));
    if text != expected {
        let at = text
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "line {at} differs:\n  written:  {}\n  expected: {}",
            text.lines().nth(at).unwrap_or(""),
            expected.lines().nth(at).unwrap_or("")
        );
    }
    let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(parsed.as_array().map(Vec::len), Some(lines.len()));
}
