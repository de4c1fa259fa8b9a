//! `tests/data/nest.c` (regions nested three deep, an async span ended on
//! another thread) built against the runtime library of this test run, and
//! run with the runtime options a test asks for.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::text;

/// The runtime's static library, built beside this test as a
/// dev-dependency: next to the test binary, or one level up.
pub fn runtime_library() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps directory");
    [deps, deps.parent().expect("profile directory")]
        .iter()
        .map(|dir| dir.join("libperfflow_runtime.a"))
        .find(|lib| lib.is_file())
        .expect("libperfflow_runtime.a next to the test binary")
}

/// Builds `tests/data/nest.c` into `dir` and returns the program.
pub fn build_nest(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = dir.join("nest");
    let built = Command::new("cc")
        .args(["-O1", "-I"])
        .arg(root.join("../runtime/include"))
        .arg(root.join("tests/data/nest.c"))
        .arg(runtime_library())
        .args(["-lpthread", "-ldl", "-lm", "-Wl,--strip-debug", "-o"])
        .arg(&bin)
        .output()
        .expect("run cc");
    assert!(built.status.success(), "{}", text(&built.stderr));
    bin
}

/// Runs `bin` in a directory of its own under `dir` with `options`, and
/// returns the one trace it wrote.
pub fn run(bin: &Path, dir: &Path, options: &str) -> PathBuf {
    let work = dir.join(options.replace([':', '='], "_"));
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = Command::new(bin);
    for (key, _) in std::env::vars() {
        if key.starts_with("PERFFLOW_") {
            cmd.env_remove(key);
        }
    }
    let done = cmd
        .current_dir(&work)
        .env("PERFFLOW_OPTIONS", options)
        .output()
        .expect("run the program");
    assert!(done.status.success(), "{}", text(&done.stderr));
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&work)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("perfflow.")
        })
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    traces.pop().unwrap()
}
