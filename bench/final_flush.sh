#!/usr/bin/env bash
# bench/final_flush.sh - how long the final flush takes when a busy job gets SIGTERM.
#
# Usage: bash bench/final_flush.sh [THREADS...]     (default: 8 32 64)
#
# Environment:
#   BENCH_RUNS   runs per thread count (default: 3)
#   BENCH_WARM   seconds the threads record before SIGTERM (default: 1)
#
# Builds the release runtime (cargo) and runtime/tests/c/busy_threads_until_killed.c
# against it: THREADS threads record enter/exit pairs back to back, without pause. Once
# every thread has started and BENCH_WARM seconds have passed, the process gets SIGTERM;
# the runtime completes the trace with what was recorded when the signal came (or, past
# its time limit, completes it without the rest), says on stderr how many events are not
# in it, and the process ends by SIGTERM. Prints one markdown row
# per run: the time from kill(2) to the process's end, the trace's size, and the
# closing record's events_written and events_dropped. Nothing here fails on a time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
runs=${BENCH_RUNS:-3}
warm=${BENCH_WARM:-1}
threads=("$@")
[[ ${#threads[@]} -gt 0 ]] || threads=(8 32 64)

die() { echo "bench/final_flush.sh: $*" >&2; exit 1; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, got '$runs'"
for t in "${threads[@]}"; do
    [[ $t =~ ^[1-9][0-9]*$ && $t -le 64 ]] || die "THREADS must be whole numbers from 1 to 64, got '$t'"
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-final-flush.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

(cd "$root" && cargo build -q --release -p perfflow-runtime) || die "building the runtime failed"
bin=$scratch/busy_threads_until_killed
cc -O2 -I "$root/runtime/include" -I "$root/runtime/tests/c" \
    "$root/runtime/tests/c/busy_threads_until_killed.c" \
    "$root/target/release/libperfflow_runtime.a" -lpthread -ldl -lm -o "$bin" \
    || die "building the program failed"

echo "| threads | run | SIGTERM to end (ms) | trace (MB) | events_written | events_dropped | stderr |"
echo "|---|---|---|---|---|---|---|"
for t in "${threads[@]}"; do
    for run in $(seq 1 "$runs"); do
        dir=$scratch/run
        rm -rf "$dir" && mkdir -p "$dir"
        (cd "$dir" && exec "$bin" "$t" >out.txt 2>err.txt) &
        pid=$!
        until grep -q '^ready$' "$dir/out.txt" 2>/dev/null; do sleep 0.01; done
        sleep "$warm"
        start=$(date +%s%N)
        kill -TERM "$pid"
        wait "$pid" || true
        end=$(date +%s%N)
        trace=$(ls "$dir"/*.pfw)
        closing=$(tail -c 400 "$trace" | grep -o '"events_written":[0-9]*,"bytes_written":[0-9]*,"events_dropped":[0-9]*' || true)
        written=$(sed -n 's/.*"events_written":\([0-9]*\).*/\1/p' <<<"$closing")
        dropped=$(sed -n 's/.*"events_dropped":\([0-9]*\).*/\1/p' <<<"$closing")
        echo "| $t | $run | $(( (end - start) / 1000000 )) | $(( $(stat -c %s "$trace") / 1000000 )) |" \
            "${written:-no closing record} | ${dropped:--} | $(tr '\n' ' ' <"$dir/err.txt") |"
        rm -rf "$dir"
    done
done
