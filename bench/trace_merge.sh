#!/usr/bin/env bash
# Speed and peak memory of `perfflow-trace merge`: writes one trace of MIB
# MiB (default 10, about 100,000 events) with trace/examples/write_big_trace.rs,
# copies it as PROCESSES processes (default 100) on as many hosts, all with
# the same pid, merges them BENCH_RUNS times (default 3) under /usr/bin/time
# and prints, for the fastest run, events/s and MB/s (input bytes per second
# of wall time and of CPU time) and the peak RSS of all runs; then removes
# the traces.
#   bash bench/trace_merge.sh [PROCESSES] [MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
processes=${1:-100}
mib=${2:-10}
runs=${BENCH_RUNS:-3}
cargo build --quiet --release -p perfflow-trace --bin perfflow-trace --example write_big_trace
tool=target/release/perfflow-trace
scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-merge-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/run"
target/release/examples/write_big_trace "$scratch/one.pfw" "$mib" >/dev/null
for i in $(seq -w 1 "$processes"); do
    cp "$scratch/one.pfw" "$scratch/run/perfflow.array.node$i.4242.pfw"
done
rm "$scratch/one.pfw"
bytes=$(cat "$scratch"/run/*.pfw | wc -c)
events=$(cat "$scratch"/run/*.pfw | grep -c '"ph":"[^M]')
printf '%s\n' "input: $processes processes, $bytes bytes, $events events (excluding metadata)"
: >"$scratch/times"
for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %U %S %M' -o "$scratch/time" "$tool" merge "$scratch/run" -o "$scratch/merged.pfw" >"$scratch/out" 2>&1 || {
        cat "$scratch/out" >&2
        exit 1
    }
    cat "$scratch/time" >>"$scratch/times"
done
printf '| processes | events | wall s | CPU s | events/s (wall) | events/s (CPU) | MB/s (wall) | MB/s (CPU) | peak RSS MiB |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n'
sort -n "$scratch/times" | awk -v p="$processes" -v b="$bytes" -v e="$events" '
    NR == 1 { s = $1; cpu = $2 + $3 }
    $4 > k { k = $4 }
    END { printf "| %d | %d | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f | %.1f |\n", p, e, s, cpu, e / s, e / cpu, b / s / 1e6, b / cpu / 1e6, k / 1024 }'
