#!/usr/bin/env bash
# Speed and peak memory of `perfflow-trace check` and `summary` on a large
# trace: writes a trace of MIB MiB (default 1024) in a scratch directory with
# trace/examples/write_big_trace.rs, runs each command BENCH_RUNS times
# (default 3) under /usr/bin/time and prints, for the fastest run, MB/s
# (10^6 bytes per second of wall time, and per second of CPU time: on a
# loaded machine the wall time includes waiting for a CPU) and the peak RSS
# of all runs; then removes the trace. BENCH_COMMANDS (default "check
# summary") names other commands taking the trace, such as critical-path and
# profile, which hold every span.
#   bash bench/trace_read.sh [MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-1024}
runs=${BENCH_RUNS:-3}
cargo build --quiet --release -p perfflow-trace --bin perfflow-trace --example write_big_trace
tool=target/release/perfflow-trace
scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-trace-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
trace=$scratch/big.pfw
target/release/examples/write_big_trace "$trace" "$mib" >/dev/null
bytes=$(stat -c %s "$trace")
events=$(grep -c '"ph":"[^M]' "$trace")
# Read the trace once so that every command finds it in the page cache.
cat "$trace" >/dev/null
printf '%s\n' "trace: $bytes bytes, $events events (excluding metadata)"
printf '| command | wall s | CPU s | MB/s (wall) | MB/s (CPU) | peak RSS MiB |\n|---|--:|--:|--:|--:|--:|\n'
for command in ${BENCH_COMMANDS:-check summary}; do
    : >"$scratch/times"
    for _ in $(seq "$runs"); do
        /usr/bin/time -f '%e %U %S %M' -o "$scratch/time" "$tool" "$command" "$trace" >"$scratch/out" 2>&1 || {
            cat "$scratch/out" >&2
            exit 1
        }
        cat "$scratch/time" >>"$scratch/times"
    done
    sort -n "$scratch/times" | awk -v c="$command" -v b="$bytes" '
        NR == 1 { s = $1; cpu = $2 + $3 }
        $4 > k { k = $4 }
        END { printf "| %s | %.2f | %.2f | %.0f | %.0f | %.1f |\n", c, s, cpu, b / s / 1e6, b / cpu / 1e6, k / 1024 }'
done
