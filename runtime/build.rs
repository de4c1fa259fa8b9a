//! Gives the shared runtime a SONAME, so programs linked against it record
//! `libperfflow_runtime.so` (found through rpath or the loader's path), not
//! the path it was linked from.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libperfflow_runtime.so");
}
