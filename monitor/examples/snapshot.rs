//! Prints what the sampler finds on this machine: the unavailable sources,
//! then the tracks of two samples one second apart.
//!
//! ```sh
//! cargo run -p perfflow-monitor --example snapshot [-- <pid> [<sources>]]
//! ```

use perfflow_monitor::{hardware_metadata, Sampler, SamplerConfig, Source};
use std::time::Duration;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut config = SamplerConfig::default();
    if let Some(pid) = args.next() {
        match pid.parse() {
            Ok(p) => config.root_pid = p,
            Err(_) => {
                eprintln!("snapshot: `{pid}` is not a pid");
                std::process::exit(2);
            }
        }
    }
    if let Some(list) = args.next() {
        match Source::parse_list(&list) {
            Ok(s) => config.sources = s,
            Err(e) => {
                eprintln!("snapshot: {e}");
                std::process::exit(2);
            }
        }
    }
    let md = hardware_metadata();
    println!(
        "{}",
        serde_json::to_string_pretty(&md.to_json_value()).unwrap_or_default()
    );
    let mut sampler = Sampler::new(config);
    sampler.sample();
    std::thread::sleep(Duration::from_secs(1));
    let snap = sampler.sample();
    for u in sampler.unavailable() {
        println!("unavailable: {u}");
    }
    for t in snap.tracks() {
        println!("{:>20.3}  {}", t.value, t.name);
    }
}
