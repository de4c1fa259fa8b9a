#!/usr/bin/env bash
# Speed and peak memory of `perfflow-trace db`: writes one trace of MIB MiB
# (default 10, about 100,000 events) with trace/examples/write_big_trace.rs,
# copies it as PROCESSES processes (default 10) on as many hosts (each copy
# made distinct by trailing blank lines, so none is skipped as already
# imported), imports them into a fresh database BENCH_RUNS times (default 3)
# under /usr/bin/time and prints, for the fastest run, events/s of wall and
# CPU time, the database size and the peak RSS of all runs; then removes
# everything.
#   bash bench/trace_db.sh [PROCESSES] [MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
processes=${1:-10}
mib=${2:-10}
runs=${BENCH_RUNS:-3}
cargo build --quiet --release -p perfflow-trace --bin perfflow-trace --example write_big_trace
tool=target/release/perfflow-trace
scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-db-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. bench/distinct_traces.sh
distinct_traces "$scratch/run" "$processes" "$mib"
bytes=$(cat "$scratch"/run/*.pfw | wc -c)
events=$(cat "$scratch"/run/*.pfw | grep -c '"ph":"[^M]')
printf '%s\n' "input: $processes processes, $bytes bytes, $events events (excluding metadata)"
: >"$scratch/times"
for _ in $(seq "$runs"); do
    rm -f "$scratch/runs.sqlite"
    /usr/bin/time -f '%e %U %S %M' -o "$scratch/time" "$tool" db -o "$scratch/runs.sqlite" "$scratch/run" >"$scratch/out" 2>&1 || {
        cat "$scratch/out" >&2
        exit 1
    }
    cat "$scratch/time" >>"$scratch/times"
done
db_bytes=$(wc -c <"$scratch/runs.sqlite")
printf '| processes | events | wall s | CPU s | events/s (wall) | events/s (CPU) | DB MB | peak RSS MiB |\n|--:|--:|--:|--:|--:|--:|--:|--:|\n'
sort -n "$scratch/times" | awk -v p="$processes" -v d="$db_bytes" -v e="$events" '
    NR == 1 { s = $1; cpu = $2 + $3 }
    $4 > k { k = $4 }
    END { printf "| %d | %d | %.2f | %.2f | %.0f | %.0f | %.0f | %.1f |\n", p, e, s, cpu, e / s, e / cpu, d / 1e6, k / 1024 }'
