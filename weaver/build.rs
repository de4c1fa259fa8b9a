//! Compiles the C++ plugin shim (clang-plugin/WeavePass.cpp) against the LLVM
//! whose major version the enabled cargo feature names, with exactly the flags
//! that LLVM's own `llvm-config --cxxflags` reports.

use std::env;
use std::path::PathBuf;
use std::process::Command;

const FEATURES: &[(&str, &str, &str)] = &[
    ("CARGO_FEATURE_LLVM14", "14", "LLVM_SYS_140_PREFIX"),
    ("CARGO_FEATURE_LLVM15", "15", "LLVM_SYS_150_PREFIX"),
    ("CARGO_FEATURE_LLVM16", "16", "LLVM_SYS_160_PREFIX"),
    ("CARGO_FEATURE_LLVM17", "17", "LLVM_SYS_170_PREFIX"),
    ("CARGO_FEATURE_LLVM18", "18", "LLVM_SYS_181_PREFIX"),
    ("CARGO_FEATURE_LLVM19", "19", "LLVM_SYS_191_PREFIX"),
    ("CARGO_FEATURE_LLVM20", "20", "LLVM_SYS_201_PREFIX"),
];

fn main() {
    let shim = PathBuf::from("../clang-plugin/WeavePass.cpp");
    println!("cargo:rerun-if-changed={}", shim.display());
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");

    let enabled: Vec<_> = FEATURES
        .iter()
        .filter(|(feature, _, _)| env::var_os(feature).is_some())
        .collect();
    let (_, major, prefix_var) = match enabled.as_slice() {
        [one] => **one,
        [] => fail("no LLVM feature enabled: build with one of --features llvm14 … llvm20"),
        _ => fail("more than one LLVM feature enabled: pick exactly one of llvm14 … llvm20"),
    };
    println!("cargo:rerun-if-env-changed={prefix_var}");

    let llvm_config = find_llvm_config(major, prefix_var);
    let version = run(&llvm_config, "--version");
    if version.split('.').next() != Some(major) {
        fail(&format!(
            "{} reports LLVM {version}, but the weaver is built for LLVM {major}; \
             set LLVM_CONFIG or {prefix_var} to an LLVM {major} installation",
            llvm_config.display()
        ));
    }

    let mut build = cc::Build::new();
    build.cpp(true).file(&shim).warnings(false);
    for flag in run(&llvm_config, "--cxxflags").split_whitespace() {
        build.flag(flag);
    }
    build.compile("perfflow_weave_shim");

    // The plugin binds LLVM symbols when clang loads it; the weaver's own
    // tests are executables and link the shared libLLVM instead.
    let libdir = run(&llvm_config, "--libdir");
    println!("cargo:rustc-link-arg-tests=-L{libdir}");
    println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{libdir}");
    for lib in run(&llvm_config, "--link-shared --libs").split_whitespace() {
        println!("cargo:rustc-link-arg-tests={lib}");
    }
}

fn find_llvm_config(major: &str, prefix_var: &str) -> PathBuf {
    if let Some(path) = env::var_os("LLVM_CONFIG") {
        return PathBuf::from(path);
    }
    if let Some(prefix) = env::var_os(prefix_var) {
        return PathBuf::from(prefix).join("bin").join("llvm-config");
    }
    for name in [format!("llvm-config-{major}"), "llvm-config".to_string()] {
        if Command::new(&name).arg("--version").output().is_ok() {
            return PathBuf::from(name);
        }
    }
    fail(&format!(
        "no llvm-config for LLVM {major} found: set LLVM_CONFIG or {prefix_var}, \
         or put llvm-config-{major} on PATH"
    ))
}

fn run(llvm_config: &PathBuf, args: &str) -> String {
    let arg = args;
    match Command::new(llvm_config)
        .args(args.split_whitespace())
        .output()
    {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Ok(out) => fail(&format!(
            "`{} {arg}` failed: {}",
            llvm_config.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(err) => fail(&format!(
            "cannot run `{} {arg}`: {err}",
            llvm_config.display()
        )),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}
