//! `convert` to `.pftrace` of a `.pfw` whose events are not in time order
//! (a JSON array orders events by position, and a merge of several
//! processes or threads writes each one's events together): an async `e`
//! written before its `b`, nested async spans with one id, the threads'
//! events apart, flow ends out of order. The
//! `.pftrace` is read back by `perfflow-trace`'s own reader with every
//! async span at its times, `check` accepts it, and Perfetto's own classes
//! (pip package perfetto) decode it. An event no `.pftrace` can hold is an
//! error naming the input and the event, and leaves no output.

mod support;

use perfflow_trace::{read_trace, Event, Layout, Phase};

use support::{path_str, perfetto_decodes, perfflow_trace, scratch, text, write};

/// Two threads of process 7. The `e` of `transfer` (ended on thread 2)
/// is written with thread 2's events, before thread 1's `b`; `poll` has
/// two spans with one id, the inner one begun after the outer one's end
/// was written.
const OUT_OF_ORDER: &str = r#"[
{"name":"process_name","ph":"M","pid":7,"tid":7,"args":{"name":"app"}},
{"name":"recv","cat":"app","ph":"B","pid":7,"tid":2,"ts":10},
{"name":"transfer","cat":"io","ph":"e","pid":7,"tid":2,"ts":30,"id":5},
{"name":"recv","cat":"app","ph":"E","pid":7,"tid":2,"ts":40},
{"name":"msg","cat":"flow","ph":"f","bp":"e","pid":7,"tid":2,"ts":35,"id":9},
{"name":"poll","cat":"io","ph":"e","pid":7,"tid":2,"ts":90,"id":1},
{"name":"step","cat":"app","ph":"B","pid":7,"tid":1,"ts":2},
{"name":"step","cat":"app","ph":"E","pid":7,"tid":1,"ts":4},
{"name":"tick","cat":"app","ph":"X","pid":7,"tid":1,"ts":5,"dur":1},
{"name":"transfer","cat":"io","ph":"b","pid":7,"tid":1,"ts":20,"id":5},
{"name":"msg","cat":"flow","ph":"t","pid":7,"tid":1,"ts":25,"id":9},
{"name":"msg","cat":"flow","ph":"s","pid":7,"tid":1,"ts":15,"id":9},
{"name":"poll","cat":"io","ph":"b","pid":7,"tid":1,"ts":50,"id":1},
{"name":"poll","cat":"io","ph":"e","pid":7,"tid":1,"ts":70,"id":1},
{"name":"poll","cat":"io","ph":"b","pid":7,"tid":1,"ts":60,"id":1}
]"#;

/// The async spans of `events` as `(name, begin ns, end ns)`, paired in
/// file order on their id (each async track of a `.pftrace` carries one
/// span), sorted.
fn async_spans(events: &[Event]) -> Vec<(String, i64, i64)> {
    let mut open: Vec<(String, String, i64)> = Vec::new();
    let mut spans = Vec::new();
    for e in events {
        let (Some(id), Some(name), Some(ts)) = (&e.id, &e.name, e.ts_ns) else {
            continue;
        };
        match e.ph {
            Some(Phase::AsyncBegin) => open.push((id.clone(), name.clone(), ts)),
            Some(Phase::AsyncEnd) => {
                let at = open
                    .iter()
                    .rposition(|(i, n, _)| i == id && n == name)
                    .unwrap_or_else(|| panic!("an e of {name} on track {id} with no b before it"));
                let (_, name, begin) = open.remove(at);
                spans.push((name, begin, ts));
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "async spans left open: {open:?}");
    spans.sort();
    spans
}

#[test]
fn async_spans_ended_before_their_begin_in_the_file_convert_at_their_times() {
    let dir = scratch("convert_out_of_order");
    let input = write(&dir, "merged.pfw", OUT_OF_ORDER);
    let output = dir.join("merged.pftrace");
    let done = perfflow_trace(&["convert", path_str(&input), path_str(&output)]);
    assert!(done.status.success(), "{}", text(&done.stderr));

    let back = read_trace(&output).expect("perfflow-trace reads its own .pftrace");
    assert_eq!(back.layout, Layout::Perfetto);
    assert_eq!(
        async_spans(&back.events),
        [
            ("poll".to_string(), 50_000, 90_000),
            ("poll".to_string(), 60_000, 70_000),
            ("transfer".to_string(), 20_000, 30_000),
        ]
    );
    // Thread slices keep their times: `tick` written as a begin and an end.
    let thread_times: Vec<(String, String, i64)> = back
        .events
        .iter()
        .filter(|e| matches!(e.ph, Some(Phase::Begin | Phase::End)))
        .map(|e| {
            let name = e.name.clone().unwrap_or_default();
            (
                name,
                e.ph.as_ref().unwrap().code().to_string(),
                e.ts_ns.unwrap(),
            )
        })
        .collect();
    for expected in [
        ("tick", "B", 5_000),
        ("tick", "E", 6_000),
        ("recv", "E", 40_000),
    ] {
        let expected = (expected.0.to_string(), expected.1.to_string(), expected.2);
        assert!(thread_times.contains(&expected), "{thread_times:?}");
    }
    // The flow's three ends, at their times.
    let mut flows: Vec<i64> = back
        .events
        .iter()
        .filter(|e| e.id.as_deref() == Some("9"))
        .map(|e| e.ts_ns.unwrap())
        .collect();
    flows.sort();
    assert_eq!(flows, [15_000, 25_000, 35_000]);

    let check = perfflow_trace(&["check", path_str(&output)]);
    assert!(
        check.status.success(),
        "{}{}",
        text(&check.stdout),
        text(&check.stderr)
    );

    let decoded = perfetto_decodes(&output);
    let events = decoded["events"].as_array().expect("events");
    let async_ends = events.iter().filter(|e| e["ph"] == "e").count();
    assert_eq!(async_ends, 3);
    // Each async end is on the track of its begin, at the end's time.
    let mut ends: Vec<i64> = events
        .iter()
        .filter(|e| e["ph"] == "e")
        .map(|e| e["ts"].as_i64().expect("ts"))
        .collect();
    ends.sort();
    assert_eq!(ends, [30_000, 70_000, 90_000]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_async_end_that_no_begin_pairs_with_is_an_error_naming_it() {
    let dir = scratch("convert_unpaired_async_end");
    let input = write(
        &dir,
        "lone.pfw",
        r#"[
{"name":"transfer","cat":"io","ph":"b","pid":7,"tid":1,"ts":50,"id":5},
{"name":"transfer","cat":"io","ph":"e","pid":7,"tid":1,"ts":40,"id":5}
]"#,
    );
    let output = dir.join("lone.pftrace");
    let failed = perfflow_trace(&["convert", path_str(&input), path_str(&output)]);
    assert_eq!(failed.status.code(), Some(1));
    let stderr = text(&failed.stderr);
    assert!(stderr.contains("lone.pfw:3:"), "{stderr}");
    assert!(stderr.contains("e \"transfer\""), "{stderr}");
    assert!(!output.exists(), "a .pftrace its reader rejects was left");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_end_with_nothing_open_on_its_thread_is_an_error_naming_it() {
    let dir = scratch("convert_end_without_begin");
    let input = write(
        &dir,
        "ends.pfw",
        r#"[
{"name":"work","ph":"B","pid":7,"tid":1,"ts":1},
{"name":"work","ph":"E","pid":7,"tid":2,"ts":2}
]"#,
    );
    let output = dir.join("ends.pftrace");
    let failed = perfflow_trace(&["convert", path_str(&input), path_str(&output)]);
    assert_eq!(failed.status.code(), Some(1));
    let stderr = text(&failed.stderr);
    assert!(stderr.contains("ends.pfw:3:"), "{stderr}");
    assert!(stderr.contains("E \"work\""), "{stderr}");
    assert!(stderr.contains("thread 2 of process 7"), "{stderr}");
    assert!(!output.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every event's `args` go into the `.pftrace` (each a debug annotation
/// holding its JSON value) and come back from it: strings, numbers,
/// booleans and objects, on begins, ends, `X` events, instants and async
/// begins. Perfetto's own classes decode the file.
#[test]
fn the_args_of_every_event_survive_a_round_trip_through_a_pftrace() {
    let dir = scratch("convert_args");
    let input = write(
        &dir,
        "args.pfw",
        r#"[
{"name":"f","cat":"c","ph":"B","pid":1,"tid":1,"ts":1,"args":{"k":"v","n":3,"b":true,"o":{"x":[1,2]}}},
{"name":"f","cat":"c","ph":"E","pid":1,"tid":1,"ts":2,"args":{"ret":5,"outcome":"raised"}},
{"name":"x","cat":"c","ph":"X","pid":1,"tid":1,"ts":3,"dur":1,"args":{"k":"v"}},
{"name":"i","cat":"c","ph":"i","pid":1,"tid":1,"ts":5,"args":{"n":1.5}},
{"name":"a","cat":"c","ph":"b","id":1,"pid":1,"tid":1,"ts":6,"args":{"k":"w"}},
{"name":"a","cat":"c","ph":"e","id":1,"pid":1,"tid":1,"ts":7}
]"#,
    );
    let pf = dir.join("args.pftrace");
    let back = dir.join("back.pfw");
    for (from, to) in [(&input, &pf), (&pf, &back)] {
        let done = perfflow_trace(&["convert", path_str(from), path_str(to)]);
        assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    }
    perfetto_decodes(&pf);
    let args = |path: &std::path::Path| -> Vec<(String, String)> {
        read_trace(path)
            .unwrap()
            .events
            .iter()
            .filter(|e| !e.args.is_null())
            .map(|e| (e.name.clone().unwrap_or_default(), e.args.to_string()))
            .collect()
    };
    let expected = [
        ("f", r#"{"b":true,"k":"v","n":3,"o":{"x":[1,2]}}"#),
        ("f", r#"{"outcome":"raised","ret":5}"#),
        ("x", r#"{"k":"v"}"#),
        ("i", r#"{"n":1.5}"#),
        ("a", r#"{"k":"w"}"#),
    ]
    .map(|(name, args)| (name.to_string(), args.to_string()));
    assert_eq!(args(&pf), expected);
    assert_eq!(args(&back), expected);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_event_stamped_before_1970_is_an_error_naming_it() {
    let dir = scratch("convert_negative_time");
    let input = write(
        &dir,
        "early.pfw",
        r#"[
{"name":"neg","ph":"X","pid":7,"tid":1,"ts":-3,"dur":2}
]"#,
    );
    let output = dir.join("early.pftrace");
    let failed = perfflow_trace(&["convert", path_str(&input), path_str(&output)]);
    assert_eq!(failed.status.code(), Some(1));
    let stderr = text(&failed.stderr);
    assert!(
        stderr.contains("early.pfw:2:") && stderr.contains("before 1970"),
        "{stderr}"
    );
    assert!(!output.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `.pfw` cut short converts to a `.pfw` cut short: what was open at the
/// cut is still read as open at the cut, and `check --allow-truncated`
/// passes on the copy as on the original.
#[test]
fn a_trace_cut_short_converts_to_one_cut_short() {
    let dir = scratch("convert_cut_short");
    let input = write(
        &dir,
        "cut.pfw",
        "[\n{\"name\":\"main\",\"ph\":\"B\",\"pid\":7,\"tid\":1,\"ts\":1},\n\
         {\"name\":\"step\",\"ph\":\"X\",\"pid\":7,\"tid\":1,\"ts\":2,\"dur\":1},\n\
         {\"name\":\"ste",
    );
    let output = dir.join("copy.pfw");
    let done = perfflow_trace(&["convert", path_str(&input), path_str(&output)]);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    assert!(text(&done.stdout).contains("cut short"));
    let copy = read_trace(&output).unwrap();
    assert!(copy.truncated);
    assert_eq!(copy.events.len(), 2);
    for file in [&input, &output] {
        let checked = perfflow_trace(&["check", "--allow-truncated", path_str(file)]);
        assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
