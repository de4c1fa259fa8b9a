#!/usr/bin/env bash
# bench/run.sh - what a woven call costs, in time, CPU, memory and trace bytes.
#
# Usage: bash bench/run.sh [N]      N calls per thread (default 5000000)
#
# Environment:
#   PERFFLOW_PREFIX  perfflow install to use (default: build/install, which
#                    scripts/build.sh creates)
#   CXX              clang++ matching the plugin's LLVM (default: clang++-19)
#   BENCH_RUNS       runs per variant; the table shows medians (default: 5)
#
# Builds bench/woven_call.cpp twice (woven through the plugin and linked to
# the shared runtime, and plain), then runs every variant BENCH_RUNS times,
# each run in a fresh scratch directory so its trace lands there, and prints
# one markdown table. Traces are measured (bytes, events) on the first run of
# a variant and deleted after every run. The cpu-mem-usage rows use N/100
# calls because that option reads /proc on every event (about 3 us per call).
# The "paced" rows make the same calls in bursts of 10000 with a 2 ms pause
# after each (timing only the bursts): the cost to a program that does not
# call back to back for seconds, while the runtime's writer thread formats
# in the pauses. They are compared with a reference paced the same way.
# Nothing here fails on a time: the script only prints figures.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
prefix=${PERFFLOW_PREFIX:-$root/build/install}
cxx=${CXX:-clang++-19}
runs=${BENCH_RUNS:-5}
n=${1:-5000000}

die() { echo "bench/run.sh: $*" >&2; exit 1; }
. "$here/lib.sh"

[[ $n =~ ^[1-9][0-9]*$ ]] || die "N must be a positive whole number, got '$n'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, got '$runs'"
command -v "$cxx" >/dev/null || die "compiler '$cxx' not found (set CXX)"
# Absolute, as the compiler runs from bench/ and the trace runs from a scratch directory.
[[ -d $prefix ]] && prefix=$(cd "$prefix" && pwd)
plugin=$prefix/lib/libWeavePass.so
runtime=$prefix/lib/libperfflow_runtime.so
for f in "$plugin" "$runtime"; do
    [[ -f $f ]] || die "$f is missing: run 'bash scripts/build.sh' first (or point PERFFLOW_PREFIX at an install)"
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# --- build ---------------------------------------------------------------------

# Compiled from inside bench/ so that every event's "cat" (the source file as
# the compiler saw it) is the short "woven_call.cpp", whatever the checkout's
# path: bytes per event then do not depend on where the project lives.
woven=$scratch/woven_call
plain=$scratch/plain_call
cxxflags=(-O2 -std=c++17 -pthread)
(cd "$here" && "$cxx" "${cxxflags[@]}" -fpass-plugin="$plugin" woven_call.cpp \
    -L"$prefix/lib" -lperfflow_runtime -Wl,-rpath,"$prefix/lib" -o "$woven") \
    || die "building the woven program failed"
(cd "$here" && "$cxx" "${cxxflags[@]}" woven_call.cpp -o "$plain") \
    || die "building the plain program failed"
grep -qa perfflow_site_enter "$woven" \
    || die "the plugin did not weave woven_empty_call (is $plugin built for $cxx's LLVM?)"

# --- measure -------------------------------------------------------------------



count_events() { # non-metadata events in the trace files given
    local total=0 f all meta
    for f in "$@"; do
        all=$(LC_ALL=C grep -c -F '"ph":' "$f" || true)
        meta=$(LC_ALL=C grep -c -F '"ph":"M"' "$f" || true)
        total=$((total + all - meta))
    done
    echo "$total"
}

rows=()   # one "|"-separated record per variant, printed at the end
declare -A reference_ns

# measure LABEL BINARY MODE THREADS CALLS OPTIONS [BURST]
# OPTIONS is a PERFFLOW_OPTIONS value, or "-" to run with the variable unset.
# BURST: calls per burst for the paced rows (none: back to back).
measure() {
    local label=$1 bin=$2 mode=$3 threads=$4 calls=$5 opts=$6 burst=${7:-}
    local pace=${burst:+p}
    local ns=() cpu=() rss=() wall=() bytes=- events=- r line t0 t1 files
    local rundir=$scratch/run
    for ((r = 1; r <= runs; r++)); do
        echo "bench: $label, $threads thread(s), run $r/$runs" >&2
        rm -rf "$rundir" && mkdir "$rundir"
        t0=$(date +%s%N)
        if [[ $opts == - ]]; then
            line=$(cd "$rundir" && env -u PERFFLOW_OPTIONS "$bin" "$mode" "$threads" "$calls" $burst) \
                || die "$label with $threads thread(s) failed"
        else
            line=$(cd "$rundir" && PERFFLOW_OPTIONS=$opts "$bin" "$mode" "$threads" "$calls" $burst) \
                || die "$label with $threads thread(s) failed"
        fi
        t1=$(date +%s%N)
        ns+=("$(field ns_per_call "$line")")
        cpu+=("$(field cpu_ns_per_call "$line")")
        rss+=("$(field vmhwm_kib "$line")")
        wall+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')")
        if ((r == 1)); then
            shopt -s nullglob
            files=("$rundir"/*.pfw)
            shopt -u nullglob
            if ((${#files[@]} > 0)); then
                bytes=$(stat -c %s "${files[@]}" | awk '{ s += $1 } END { printf "%.0f\n", s }')
                events=$(count_events "${files[@]}")
            elif [[ $bin == "$woven" && $mode == call ]]; then
                bytes=0 events=0
            fi
        fi
        rm -rf "$rundir"
    done
    local m_ns
    m_ns=$(median "${ns[@]}")
    [[ $mode == reference ]] && reference_ns[$threads$pace]=$m_ns
    rows+=("$label|$threads|$calls|$m_ns|$(median "${cpu[@]}")|$(median "${rss[@]}")|$bytes|$events|$(median "${wall[@]}")|$threads$pace")
}

small_n=$((n / 100 > 0 ? n / 100 : 1))
for t in 1 2; do measure reference "$plain" reference "$t" "$n" -; done
for t in 1 2; do measure "not woven" "$plain" call "$t" "$n" -; done
for t in 1 2; do measure "log-enable=False" "$woven" call "$t" "$n" "log-enable=False"; done
for t in 1 2; do measure "Verbose (default)" "$woven" call "$t" "$n" -; done
for t in 1 2; do measure "log-event=Compact" "$woven" call "$t" "$n" "log-event=Compact"; done
for t in 1 2; do measure "cpu-mem-usage=True" "$woven" call "$t" "$small_n" "cpu-mem-usage=True"; done
burst=10000
for t in 1 2; do measure "reference, paced" "$plain" reference "$t" "$n" - "$burst"; done
for t in 1 2; do measure "Verbose, paced" "$woven" call "$t" "$n" - "$burst"; done
for t in 1 2; do measure "log-event=Compact, paced" "$woven" call "$t" "$n" "log-event=Compact" "$burst"; done

# --- report --------------------------------------------------------------------

model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
os=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") || true)
cmd="bash bench/run.sh${1:+ $1}"
[[ -n ${BENCH_RUNS:-} ]] && cmd="BENCH_RUNS=$BENCH_RUNS $cmd"
echo
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command:  $cmd"
echo "machine:  $(nproc) CPUs, ${model:-unknown CPU}, Linux $(uname -r)${os:+, $os}"
echo "compiler: $("$cxx" --version | head -n 1)"
echo "runtime:  $runtime"
echo "calls:    N = $n per thread (cpu-mem-usage rows: $small_n); median of $runs runs"
echo
printf '%s\n' "${rows[@]}" | awk -F'|' -v ref1="${reference_ns[1]}" -v ref2="${reference_ns[2]}" \
    -v ref1p="${reference_ns[1p]}" -v ref2p="${reference_ns[2p]}" '
BEGIN {
    print "| variant | threads | calls/thread | ns/call | CPU ns/call | x reference | peak RSS MiB | trace bytes | events | bytes/event | process s |"
    print "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
}
{
    ref = ($10 == "1") ? ref1 : ($10 == "2") ? ref2 : ($10 == "1p") ? ref1p : ref2p
    ratio = (ref > 0) ? sprintf("%.2fx", $4 / ref) : "-"
    per_event = ($8 != "-" && $8 > 0) ? sprintf("%.1f", $7 / $8) : "-"
    printf "| %s | %d | %d | %.1f | %.1f | %s | %.1f | %s | %s | %s | %.2f |\n",
        $1, $2, $3, $4, $5, ratio, $6 / 1024, $7, $8, per_event, $9
}'
echo
echo "ns/call: each thread's loop time / its calls, averaged over threads (enter + exit per call)."
echo "CPU ns/call: process user+sys time over the loops and thread exits / all calls."
echo "x reference: ns/call over the reference loop's with the same thread count (paced rows: the paced reference's)."
echo "trace bytes, events: first run's trace files; events exclude metadata (ph M)."
echo "process s: the whole process, including start-up and the trace's final write."
