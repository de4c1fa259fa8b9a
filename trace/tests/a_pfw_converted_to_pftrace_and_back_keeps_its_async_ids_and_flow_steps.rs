//! `convert` a `.pfw` to a `.pftrace` and back: every async event keeps
//! its id (numeric or not, two spans of different names sharing one, an
//! `n` instant), and every flow event its phase (`s`, each `t` step, `f`)
//! and id. Perfetto's own classes decode the `.pftrace` in between, and
//! the `.pfw` that comes back passes `check`.

mod support;

use perfflow_trace::{read_trace, Event};

use support::{assert_check_passes, path_str, perfetto_decodes, scratch, write};

const TRACE: &str = r#"[
{"name":"process_name","ph":"M","pid":9,"tid":9,"args":{"name":"app"}},
{"name":"fetch","cat":"io","ph":"b","pid":9,"tid":9,"ts":10.000,"id":7},
{"name":"fetch","cat":"io","ph":"n","pid":9,"tid":9,"ts":11.000,"id":7},
{"name":"store","cat":"io","ph":"b","pid":9,"tid":9,"ts":12.000,"id":"0x1f"},
{"name":"fetch","cat":"io","ph":"b","pid":9,"tid":10,"ts":13.000,"id":3},
{"name":"parse","cat":"cpu","ph":"b","pid":9,"tid":10,"ts":14.000,"id":3},
{"name":"step","cat":"app","ph":"X","pid":9,"tid":9,"ts":15.000,"dur":20.000},
{"name":"hand","cat":"flow","ph":"s","pid":9,"tid":9,"ts":16.000,"id":42},
{"name":"hand","cat":"flow","ph":"t","pid":9,"tid":10,"ts":17.000,"id":42},
{"name":"hand","cat":"flow","ph":"t","pid":9,"tid":9,"ts":18.000,"id":42},
{"name":"hand","cat":"flow","ph":"f","pid":9,"tid":10,"ts":19.000,"bp":"e","id":42},
{"name":"hand","cat":"flow","ph":"s","pid":9,"tid":10,"ts":20.000,"id":42},
{"name":"parse","cat":"cpu","ph":"e","pid":9,"tid":10,"ts":21.000,"id":3},
{"name":"fetch","cat":"io","ph":"e","pid":9,"tid":9,"ts":22.000,"id":3},
{"name":"store","cat":"io","ph":"e","pid":9,"tid":10,"ts":23.000,"id":"0x1f"},
{"name":"fetch","cat":"io","ph":"e","pid":9,"tid":10,"ts":24.000,"id":7},
{"name":"hand","cat":"flow","ph":"f","pid":9,"tid":9,"ts":25.000,"bp":"e","id":42}
]
"#;

/// What must survive, per async and flow event: phase, name, category,
/// thread, time and id; sorted, as the `.pftrace` writes each async span's
/// begin and end together.
fn linked(events: &[Event]) -> Vec<String> {
    let mut kept: Vec<String> = events
        .iter()
        .filter(|e| {
            let code = e.ph.as_ref().map_or("?", |p| p.code());
            matches!(code, "b" | "e" | "n" | "s" | "t" | "f")
        })
        .map(|e| {
            format!(
                "{} {:?} {:?} {:?}/{:?} {:?} id {:?}",
                e.ph.as_ref().unwrap().code(),
                e.name,
                e.cat,
                e.pid,
                e.tid,
                e.ts_ns,
                e.id
            )
        })
        .collect();
    kept.sort();
    kept
}

#[test]
fn a_pfw_converted_to_pftrace_and_back_keeps_its_async_ids_and_flow_steps() {
    let dir = scratch("round_trip_ids_and_steps");
    let pfw = write(&dir, "app.pfw", TRACE);
    let pftrace = dir.join("app.pftrace");
    let back = dir.join("back.pfw");
    perfflow_trace::convert(&pfw, &pftrace).expect("to .pftrace");
    perfflow_trace::convert(&pftrace, &back).expect("back to .pfw");

    let before = linked(&read_trace(&pfw).unwrap().events);
    assert_eq!(before.len(), 15);
    assert_eq!(linked(&read_trace(&pftrace).unwrap().events), before);
    assert_eq!(linked(&read_trace(&back).unwrap().events), before);
    assert_check_passes(&[path_str(&back)]);

    // Perfetto's classes read every event of the .pftrace.
    let decoded = perfetto_decodes(&pftrace);
    assert_eq!(decoded["events"].as_array().unwrap().len(), 17);
    std::fs::remove_dir_all(&dir).unwrap();
}
