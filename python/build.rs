//! Gives the module the shared runtime's SONAME, `libperfflow_runtime.so`:
//! a woven library linked against the shared runtime and loaded after
//! `import perfflow` then finds the runtime already loaded (the dynamic
//! loader matches its dependency by SONAME) and binds to this module's copy,
//! so the process keeps one runtime.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libperfflow_runtime.so");
}
