#!/usr/bin/env bash
# bench/job_report.sh - how long perfflow-monitor's job report takes for a big job.
#
# Usage: bash bench/job_report.sh [HOSTS]     (default: 16)
#
# Environment:
#   BENCH_RUNS   runs (default: 3)
#
# Builds monitor/examples/job_report_cost.rs in release mode and runs it BENCH_RUNS times: each
# run writes a synthetic job of HOSTS hosts x 1 hour at 1 s (CPU series, running totals of I/O,
# network, InfiniBand and RAPL energy, perf series), then times generate_report: parsing the
# metric files, the HTML page with its SVG charts, perfmon's PDF and its PNG plots. Prints one
# markdown row per run with the wall and CPU time (the CPU time moves less on a loaded machine).
# Nothing here fails on a time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
runs=${BENCH_RUNS:-3}
hosts=${1:-16}

die() { echo "bench/job_report.sh: $*" >&2; exit 1; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, got '$runs'"
[[ $hosts =~ ^[1-9][0-9]*$ && $hosts -le 256 ]] || die "HOSTS must be a whole number from 1 to 256, got '$hosts'"

(cd "$root" && cargo build -q --release -p perfflow-monitor --example job_report_cost) \
    || die "building the example failed"
echo "| run | hosts | wall (s) | CPU (s) | HTML | PDF | PNG plots |"
echo "|-----|-------|----------|---------|------|-----|-----------|"
for run in $(seq 1 "$runs"); do
    line=$("$root/target/release/examples/job_report_cost" "$hosts" | tail -n 1)
    # report 4.213 s (4.100 s CPU): job-report-bench.html (2.6 MB), job-report-bench.pdf (0.7 MB), 24 PNG plots
    secs=$(sed -E 's/^report ([0-9.]+) s .*/\1/' <<<"$line")
    cpu=$(sed -E 's/^report [0-9.]+ s \(([0-9.]+) s CPU\).*/\1/' <<<"$line")
    html=$(sed -E 's/.*\.html \(([^)]*)\).*/\1/' <<<"$line")
    pdf=$(sed -E 's/.*\.pdf \(([^)]*)\).*/\1/' <<<"$line")
    pngs=$(sed -E 's/.*, ([0-9]+) PNG plots$/\1/' <<<"$line")
    echo "| $run | $hosts | $secs | $cpu | $html | $pdf | $pngs |"
done
