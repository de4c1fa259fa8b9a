//! Writes a large trace in the layout the runtime writes, for the
//! benchmark of `perfflow-trace check` and `summary` (bench/trace_read.sh).
//!
//! Usage: write_big_trace FILE [MIB]  (default 1024 MiB)
//!
//! Four threads each record `main` around nested `solve`/`step` calls as
//! B/E events, in blocks of a few thousand events per thread as the
//! runtime's writer flushes them; every 64th call also begins an async
//! `transfer` that another thread ends, so the `e` of some of them lands
//! in the file before their `b`.

use std::fs::File;
use std::io::{BufWriter, Write};

const PID: u32 = 4242;
const THREADS: u32 = 4;
/// Events per thread block, as a writer chunk holds them.
const BLOCK: usize = 8192;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: write_big_trace FILE [MIB]");
    let mib: u64 = args
        .next()
        .map_or(1024, |m| m.parse().expect("MIB: a number"));
    let target = mib << 20;
    let mut out = Counted {
        out: BufWriter::with_capacity(1 << 20, File::create(&path)?),
        written: 0,
    };
    out.put("[\n")?;
    out.put(
        &format!(
            "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{PID},\"tid\":{PID},\"args\":{{\"name\":\"bench\"}}}},\n"
        ),
    )?;
    let base: u64 = 1_700_000_000_000_000_000;
    let mut clock = vec![base; THREADS as usize];
    let mut calls = vec![0u64; THREADS as usize];
    let mut line = String::new();
    for tid in 0..THREADS {
        let ts = clock[tid as usize];
        event(&mut line, "main", PID + tid, ts, "B", None);
        out.put(&line)?;
    }
    // Async spans begun by one thread and ended by the next, by id.
    let mut next_id = 1u64;
    let mut pending: Vec<Vec<(u64, u64)>> = vec![Vec::new(); THREADS as usize];
    'blocks: loop {
        for tid in 0..THREADS {
            if out.written >= target {
                break 'blocks;
            }
            let t = tid as usize;
            let mut block = 0;
            while block < BLOCK {
                let ts = &mut clock[t];
                for (name, ph) in [
                    ("solve", "B"),
                    ("compute_step", "B"),
                    ("compute_step", "E"),
                    ("compute_step", "B"),
                    ("compute_step", "E"),
                    ("solve", "E"),
                ] {
                    *ts += 137;
                    event(&mut line, name, PID + tid, *ts, ph, None);
                    out.put(&line)?;
                }
                block += 6;
                calls[t] += 1;
                if calls[t] % 64 == 0 {
                    *ts += 11;
                    event(&mut line, "transfer", PID + tid, *ts, "b", Some(next_id));
                    out.put(&line)?;
                    pending[(t + 1) % THREADS as usize].push((next_id, *ts));
                    next_id += 1;
                    block += 1;
                }
                if let Some((id, begun)) = pending[t].pop() {
                    let end = (*ts).max(begun) + 5_000;
                    *ts = end;
                    event(&mut line, "transfer", PID + tid, end, "e", Some(id));
                    out.put(&line)?;
                    block += 1;
                }
            }
        }
    }
    for (t, ends) in pending.iter().enumerate() {
        for &(id, begun) in ends {
            event(
                &mut line,
                "transfer",
                PID + t as u32,
                begun + 5_000,
                "e",
                Some(id),
            );
            out.put(&line)?;
        }
    }
    for tid in 0..THREADS {
        let ts = clock[tid as usize] + 1_000;
        event(&mut line, "main", PID + tid, ts, "E", None);
        out.put(&line)?;
    }
    line = format!(
        "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{PID},\"tid\":{PID},\"args\":{{\"name\":\"bench\"}}}}\n]\n"
    );
    out.put(&line)?;
    out.out.flush()?;
    println!("{path}: {} bytes", out.written);
    Ok(())
}

/// The output and how many bytes went to it.
struct Counted {
    out: BufWriter<File>,
    written: u64,
}

impl Counted {
    fn put(&mut self, line: &str) -> std::io::Result<()> {
        self.written += line.len() as u64;
        self.out.write_all(line.as_bytes())
    }
}

/// One event line as the runtime writes it.
fn event(line: &mut String, name: &str, tid: u32, ts_ns: u64, ph: &str, id: Option<u64>) {
    use std::fmt::Write as _;
    line.clear();
    let _ = write!(
        line,
        "{{\"name\":\"{name}\",\"cat\":\"bench.c\",\"pid\":{PID},\"tid\":{tid},\"ts\":{}.{:03},\"ph\":\"{ph}\"",
        ts_ns / 1000,
        ts_ns % 1000
    );
    if let Some(id) = id {
        let _ = write!(line, ",\"id\":{id}");
    }
    line.push_str("},\n");
}
