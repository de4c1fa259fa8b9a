#!/usr/bin/env bash
# Time, peak memory and size of `perfflow-trace export --parquet` against
# the SQLite database it reads: writes one trace of MIB MiB (default 10,
# about 100,000 events) with trace/examples/write_big_trace.rs, copies it as
# PROCESSES processes (default 10) on as many hosts, imports them with
# `perfflow-trace db`, then exports the database BENCH_RUNS times (default
# 3) under /usr/bin/time into a fresh directory and prints, for the fastest
# run, rows/s of wall and CPU time, the database's and the Parquet files'
# sizes, and the peak RSS of all runs; then removes everything.
#   bash bench/trace_export.sh [PROCESSES] [MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
processes=${1:-10}
mib=${2:-10}
runs=${BENCH_RUNS:-3}
cargo build --quiet --release -p perfflow-trace --bin perfflow-trace --example write_big_trace
tool=target/release/perfflow-trace
scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-export-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. bench/distinct_traces.sh
distinct_traces "$scratch/run" "$processes" "$mib"
trace_bytes=$(cat "$scratch"/run/*.pfw | wc -c)
"$tool" db -o "$scratch/runs.sqlite" "$scratch/run" >/dev/null
rm -r "$scratch/run"
rows=$("$tool" sql "$scratch/runs.sqlite" --csv \
    "SELECT (SELECT COUNT(*) FROM span) + (SELECT COUNT(*) FROM instant)
          + (SELECT COUNT(*) FROM flow) + (SELECT COUNT(*) FROM counter)
          + (SELECT COUNT(*) FROM thread) + (SELECT COUNT(*) FROM process)" | tail -1)
db_bytes=$(wc -c <"$scratch/runs.sqlite")
printf '%s\n' "input: $processes processes, $trace_bytes bytes of trace, $rows rows, database $db_bytes bytes"
: >"$scratch/times"
for _ in $(seq "$runs"); do
    rm -rf "$scratch/parquet"
    /usr/bin/time -f '%e %U %S %M' -o "$scratch/time" "$tool" export --parquet "$scratch/parquet" "$scratch/runs.sqlite" >"$scratch/out" 2>&1 || {
        cat "$scratch/out" >&2
        exit 1
    }
    cat "$scratch/time" >>"$scratch/times"
done
parquet_bytes=$(find "$scratch/parquet" -name '*.parquet' -print0 | xargs -0 cat | wc -c)
files=$(find "$scratch/parquet" -name '*.parquet' | wc -l)
printf '| processes | rows | wall s | CPU s | rows/s (wall) | rows/s (CPU) | SQLite MB | Parquet MB | files | peak RSS MiB |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n'
sort -n "$scratch/times" | awk -v p="$processes" -v r="$rows" -v d="$db_bytes" -v q="$parquet_bytes" -v f="$files" '
    NR == 1 { s = $1; cpu = $2 + $3 }
    $4 > k { k = $4 }
    END { printf "| %d | %d | %.2f | %.2f | %.0f | %.0f | %.1f | %.1f | %d | %.1f |\n", p, r, s, cpu, r / s, r / cpu, d / 1e6, q / 1e6, f, k / 1024 }'
