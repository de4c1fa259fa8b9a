//! perfflow-monitor: samples node and process metrics for perfflow traces
//! and the job monitor.
//!
//! A [`Sampler`] is built once from a [`SamplerConfig`]; it probes every
//! requested [`Source`] and records what cannot work on this machine as
//! [`Unavailable`] (once each; an absent GPU or InfiniBand port is not an
//! error). Each call to [`Sampler::sample`] then returns a [`Snapshot`] with
//! one typed, `Option`al part per source, and [`Snapshot::tracks`] flattens
//! it into named values (units in the names) for counter tracks.
//!
//! Sources:
//!
//! - `proc`: the process tree of a root pid, found again at every sample:
//!   CPU time and percent, threads, open descriptors, RSS, VMS, shared,
//!   USS, swap, memory percent, I/O bytes and calls, context switches.
//! - `system`: CPU busy percent in total and per CPU, load averages,
//!   memory and swap, CPU frequency.
//! - `net`: bytes and packets per network interface.
//! - `ib`: InfiniBand port counters (data counters are 4-byte words).
//! - `rapl`: RAPL energy and power per domain, across counter wraps.
//! - `perf`: perf events of the process tree (generic hardware and software
//!   events, derived IPC and miss rates, architecture-specific event groups
//!   from `groups/`).
//! - `gpu`: NVIDIA GPUs through NVML, loaded at run time.
//!
//! [`hardware_metadata`] describes the machine once per run.
//!
//! [`cli`] is the `perfflow-monitor` job monitor built on the sampler, with
//! its exports ([`export`]) and report ([`report`]). They are the cargo
//! feature `cli` (on by default); without it the crate is the samplers
//! alone, which is what the runtime links, so a traced program carries no
//! Arrow, Parquet, ORC or PDF code.
//!
//! The code is split as the data flows: [`parse`] holds pure parsers from
//! kernel text to typed structs (they never touch a file, so they are tested
//! on literal text), [`source`] binds them to `/proc`, `/sys`, perf and NVML
//! (roots are configurable so tests can use a fake tree), [`sampler`]
//! orchestrates, and [`track`] flattens. Counters that only grow are kept
//! raw and also given as per-second rates against the previous sample; the
//! first sample has no rates.
//!
//! Cost: the process source keeps its per-process descriptors open and
//! re-reads them with `pread`, and reads its costliest files (`status`,
//! `smaps_rollup`, the `fd` directory) at most once per
//! [`ProcessDetail::detail_interval`] (1 s by default). One sample of a
//! 51-process tree with every source costs under 1 ms of CPU at 10 Hz on
//! a 2-core VM; `examples/sample_cost.rs` measures it and
//! `docs/benchmarks.md` keeps the figures.

#[cfg(feature = "cli")]
pub mod cli;
pub mod duration;
pub mod error;
#[cfg(feature = "cli")]
pub mod export;
pub mod fd;
pub mod groups;
pub mod install;
pub mod metadata;
pub mod parse;
pub mod process_meta;
#[cfg(feature = "cli")]
pub mod report;
pub mod sampler;
pub mod source;
pub mod track;

pub use error::{Error, ParseError};
pub use metadata::{hardware_metadata, HardwareMetadata};
pub use sampler::{Sampler, SamplerConfig, Snapshot, Source, Unavailable};
pub use source::perf::GroupSelection;
pub use source::process::ProcessDetail;
pub use track::Track;
