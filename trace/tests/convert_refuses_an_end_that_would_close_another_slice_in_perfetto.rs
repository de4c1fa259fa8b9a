//! A Perfetto slice end closes the innermost open slice of its track. A
//! JSON `E` named for an outer slice (the spans cross) would close another
//! slice in the converted trace, whose spans would then differ from the
//! input's: `convert` refuses it, names the event, and writes nothing.

mod support;

use support::*;

#[test]
fn convert_refuses_an_end_that_would_close_another_slice_in_perfetto() {
    let dir = scratch("convert_crossed");
    let crossed = write(
        &dir,
        "crossed.pfw",
        r#"[
{"name":"main","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"a","ph":"B","pid":1,"tid":1,"ts":10},
{"name":"main","ph":"E","pid":1,"tid":1,"ts":20},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":100}
]
"#,
    );
    let out = dir.join("crossed.pftrace");
    let done = perfflow_trace(&["convert", path_str(&crossed), path_str(&out)]);
    assert_eq!(done.status.code(), Some(1), "{}", text(&done.stderr));
    let stderr = text(&done.stderr);
    assert!(stderr.contains("crossed.pfw:4"), "{stderr}");
    assert!(
        stderr.contains(r#"innermost open slice is B "a""#),
        "{stderr}"
    );
    assert!(!out.exists());

    // Nested properly (or an E without a name), it converts.
    let nested = write(
        &dir,
        "nested.pfw",
        r#"[
{"name":"main","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"a","ph":"B","pid":1,"tid":1,"ts":10},
{"ph":"E","pid":1,"tid":1,"ts":20},
{"name":"main","ph":"E","pid":1,"tid":1,"ts":100}
]
"#,
    );
    let done = perfflow_trace(&["convert", path_str(&nested), path_str(&out)]);
    assert!(done.status.success(), "{}", text(&done.stderr));
}
