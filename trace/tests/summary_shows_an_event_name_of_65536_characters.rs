//! A function name longer than the formatter's width limit (65,535) is
//! printed in full by `summary`, in an aligned table, without a panic.

use std::path::PathBuf;
use std::process::Command;

fn trace_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("perfflow-trace-long-name");
    std::fs::create_dir_all(&dir).expect("create test directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write trace file");
    path
}

#[test]
fn summary_shows_an_event_name_of_65536_characters() {
    let long = "n".repeat(65_536);
    let text = format!(
        "[\n{{\"name\":\"{long}\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":2}},\n\
         {{\"name\":\"short\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1}}\n]\n"
    );
    let file = trace_file("long.pfw", &text);
    let output = Command::new(env!("CARGO_BIN_EXE_perfflow-trace"))
        .arg("summary")
        .arg(&file)
        .output()
        .expect("run perfflow-trace");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<&str> = stdout
        .lines()
        .skip_while(|line| !line.starts_with("function"))
        .take(3)
        .collect();
    assert_eq!(rows.len(), 3, "{}", &stdout[..stdout.len().min(300)]);
    // The name column is as wide as the longest name.
    let pad = |name: &str| format!("{name}{}", " ".repeat(long.len() - name.len()));
    assert_eq!(
        rows,
        [
            format!(
                "{}  calls  total (us)  self (us)  min (us)  mean (us)  max (us)",
                pad("function")
            ),
            format!("{long}      1       2.000      2.000     2.000      2.000     2.000"),
            format!(
                "{}      1       1.000      1.000     1.000      1.000     1.000",
                pad("short")
            ),
        ]
    );
}
