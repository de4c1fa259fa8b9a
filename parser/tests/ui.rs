//! Golden tests: each `tests/ui/NAME.txt` holds one bad annotation and
//! `tests/ui/NAME.stderr` the expected `render_errors` output for it.
//!
//! Run with `PERFFLOW_BLESS=1` to write the current output to the
//! `.stderr` files instead of comparing.

use std::fs;
use std::path::{Path, PathBuf};

use perfflow_parser::{parse_annotation, render_errors, Annotation};

fn ui_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("ui")
}

fn cases(extension: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(ui_dir())
        .expect("tests/ui is readable")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    paths.sort();
    paths
}

/// The annotation in a case file: its text without the final line break.
fn annotation(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("case file is UTF-8");
    let text = text.strip_suffix('\n').unwrap_or(&text);
    text.strip_suffix('\r').unwrap_or(text).to_string()
}

#[test]
fn rendered_errors_match_the_golden_files() {
    let bless = std::env::var_os("PERFFLOW_BLESS").is_some_and(|v| v == "1");
    let inputs = cases("txt");
    assert!(inputs.len() >= 12, "expected at least 12 golden cases");

    let mut failures = Vec::new();
    for input_path in &inputs {
        let input = annotation(input_path);
        let expected_path = input_path.with_extension("stderr");
        let actual = match parse_annotation(&input) {
            Annotation::Invalid(errors) => render_errors(&input, &errors),
            other => {
                failures.push(format!("{}: not invalid: {other:?}", input_path.display()));
                continue;
            }
        };
        if bless {
            fs::write(&expected_path, &actual).expect("golden file is writable");
            continue;
        }
        match fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{}: output differs\n--- expected\n{expected}--- actual\n{actual}",
                input_path.display()
            )),
            Err(_) => failures.push(format!(
                "{}: missing; run with PERFFLOW_BLESS=1 to create it\n{actual}",
                expected_path.display()
            )),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_golden_file_has_an_input() {
    for expected in cases("stderr") {
        assert!(
            expected.with_extension("txt").exists(),
            "{} has no .txt beside it",
            expected.display()
        );
    }
}
