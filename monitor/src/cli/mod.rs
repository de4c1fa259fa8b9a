//! The `perfflow-monitor` command: a job monitor built on the sampler.
//!
//! The modules follow the data: [`args`] turns the command line into a
//! [`args::Config`]; [`job`] finds the job and its processes; [`run`]
//! samples them, [`record`] turns each snapshot into rows of the
//! perfmon-compatible files, [`store`] keeps each node's rows on disk and
//! combines every node's into the per-job files, and [`trace`] writes the
//! counter tracks for Perfetto; [`post`] is what follows a run (exports,
//! report). [`signals`] and [`log`] serve the run.

pub mod args;
pub mod dumps;
pub mod job;
pub mod log;
pub mod post;
pub mod record;
pub mod run;
pub mod signals;
pub mod store;
pub mod trace;

use args::Invocation;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The metrics directory of a results directory given to `merge`: `DIR`
/// itself if it holds node data, else `DIR/metrics`.
pub fn metrics_dir_of(dir: &Path) -> PathBuf {
    if dir.join(store::NODES_DIR).is_dir() {
        dir.to_path_buf()
    } else {
        dir.join("metrics")
    }
}

/// Runs the command with `args` (without the program name); returns the
/// exit status.
pub fn main_with_args(args: Vec<OsString>) -> i32 {
    match args::parse(args) {
        Err(e) => {
            eprintln!("perfflow-monitor: {e}");
            eprintln!("Try `perfflow-monitor --help`.");
            run::EXIT_USAGE
        }
        Ok(Invocation::Help(text)) | Ok(Invocation::Version(text)) => {
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
            0
        }
        Ok(Invocation::Completions(shell)) => {
            let mut cmd = args::command();
            clap_complete::generate(shell, &mut cmd, "perfflow-monitor", &mut std::io::stdout());
            0
        }
        Ok(Invocation::Man(dir)) => {
            let written = std::fs::create_dir_all(&dir)
                .and_then(|()| clap_mangen::generate_to(args::command(), &dir));
            match written {
                Ok(()) => {
                    println!("{}: manual pages written", dir.display());
                    0
                }
                Err(e) => {
                    eprintln!("perfflow-monitor man: {}: {e}", dir.display());
                    run::EXIT_FAILURE
                }
            }
        }
        Ok(Invocation::Merge {
            dir,
            exports,
            report,
        }) => {
            if let Err(e) = std::fs::metadata(&dir) {
                eprintln!("perfflow-monitor merge: {}", crate::Error::io(&dir, e));
                return run::EXIT_FAILURE;
            }
            let metrics = metrics_dir_of(&dir);
            let out_dir = metrics
                .parent()
                .map_or_else(|| dir.clone(), Path::to_path_buf);
            let config = args::Config {
                exports,
                report,
                ..args::Config::default()
            };
            let combined =
                store::combine_and(&metrics, None, |_| post::post_process(&config, &out_dir));
            match combined {
                Ok((s, post)) => {
                    for skipped in &s.skipped {
                        eprintln!("perfflow-monitor merge: {skipped}");
                    }
                    for (host, n) in &s.samples {
                        println!("{host}: {n} samples");
                    }
                    for f in &s.files {
                        println!("wrote {}", f.display());
                    }
                    match post {
                        Ok(notes) => {
                            notes.iter().for_each(|n| println!("{n}"));
                            0
                        }
                        Err(e) => {
                            eprintln!("perfflow-monitor merge: {e}");
                            run::EXIT_FAILURE
                        }
                    }
                }
                Err(e) => {
                    eprintln!("perfflow-monitor merge: {e}");
                    run::EXIT_FAILURE
                }
            }
        }
        Ok(Invocation::Run(config)) => {
            for note in &config.notes {
                eprintln!("perfflow-monitor: {note}");
            }
            run::run(&config)
        }
    }
}
