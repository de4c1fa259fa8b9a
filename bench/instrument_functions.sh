#!/usr/bin/env bash
# bench/instrument_functions.sh - what a call costs through the runtime's
# -finstrument-functions hooks, for a function the filter file leaves out
# and for one it traces.
#
# Usage: bash bench/instrument_functions.sh [N]   N calls (default 20000000;
#        the traced rows use N/20, as each call writes two events)
#
# Environment:
#   PERFFLOW_PREFIX  perfflow install to use (default: build/install, which
#                    scripts/build.sh creates)
#   CC               the compiler (default: gcc); any compiler with
#                    -finstrument-functions
#   BENCH_RUNS       runs per row; the table shows medians (default: 5)
#   CLANG            clang of the plugin's LLVM (default: clang-19): the last
#                    row weaves the same function through the same filter
#                    file, for comparison on the same machine and load
#
# Builds bench/instrumented_call.c with -finstrument-functions against the
# shared runtime, and plain as the reference, runs each row BENCH_RUNS times
# in a fresh scratch directory (traces deleted after every run) with
# PERFFLOW_WEAVE_FILTER selecting traced_fn only, and prints one markdown
# table of ns per call. Nothing here fails on a time: it only prints figures.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
prefix=${PERFFLOW_PREFIX:-$root/build/install}
cc=${CC:-gcc}
runs=${BENCH_RUNS:-5}
n=${1:-20000000}

die() { echo "bench/instrument_functions.sh: $*" >&2; exit 1; }
[[ $n =~ ^[1-9][0-9]*$ ]] || die "N must be a positive whole number, got '$n'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, got '$runs'"
command -v "$cc" >/dev/null || die "compiler '$cc' not found (set CC)"
[[ -d $prefix ]] && prefix=$(cd "$prefix" && pwd)
lib=$(ls -d "$prefix"/lib*/libperfflow_runtime.so 2>/dev/null | head -1 || true)
[[ -n $lib ]] || die "no libperfflow_runtime.so under $prefix: run 'bash scripts/build.sh' first"
libdir=$(dirname "$lib")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"$cc" -O2 -finstrument-functions "$here/instrumented_call.c" -L"$libdir" -Wl,-rpath,"$libdir" \
    -lperfflow_runtime -o "$scratch/instrumented" || die "building the instrumented program failed"
"$cc" -O2 "$here/instrumented_call.c" -o "$scratch/plain" || die "building the plain program failed"
printf 'include function traced_fn\n' >"$scratch/filter"
clang=${CLANG:-clang-19}
plugin=$libdir/libWeavePass.so
woven=""
if command -v "$clang" >/dev/null && [[ -f $plugin ]]; then
    PERFFLOW_WEAVE_FILTER="$scratch/filter" "$clang" -O2 -fpass-plugin="$plugin" "$here/instrumented_call.c" \
        -L"$libdir" -Wl,-rpath,"$libdir" -lperfflow_runtime -o "$scratch/woven" 2>/dev/null \
        && woven=$scratch/woven
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# row PROGRAM WHICH CALLS: the median ns/call over BENCH_RUNS runs.
row() {
    local exe=$1 which=$2 calls=$3
    for _ in $(seq "$runs"); do
        rm -rf "$scratch/run" && mkdir "$scratch/run"
        (cd "$scratch/run" && PERFFLOW_WEAVE_FILTER="$scratch/filter" "$exe" "$which" "$calls")
    done | median
}

echo "| call | calls | ns/call |"
echo "|---|---:|---:|"
echo "| plain (no -finstrument-functions) | $n | $(row "$scratch/plain" skipped "$n") |"
echo "| instrumented, filtered out | $n | $(row "$scratch/instrumented" skipped "$n") |"
echo "| instrumented, traced (B and E events) | $((n / 20)) | $(row "$scratch/instrumented" traced $((n / 20))) |"
if [[ -n $woven ]]; then
    echo "| woven through the filter file ($clang), traced | $((n / 20)) | $(row "$woven" traced $((n / 20))) |"
fi
rm -rf "$scratch/run"
