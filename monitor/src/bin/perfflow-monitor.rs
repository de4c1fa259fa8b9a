//! `perfflow-monitor`: see `perfflow-monitor --help` and
//! [`perfflow_monitor::cli`].

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(perfflow_monitor::cli::main_with_args(args));
}
