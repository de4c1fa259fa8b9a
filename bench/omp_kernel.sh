#!/usr/bin/env bash
# bench/omp_kernel.sh - what tracing costs a program that keeps every core
# busy: bench/omp_kernel.cpp (OpenMP on all cores, woven functions at
# millions of events per second, as LULESH), plain against woven, JSON and
# Perfetto.
#
# Usage: bash bench/omp_kernel.sh [N STEPS PARTICLES]   (default 1024 300 80000)
#
# Environment:
#   PERFFLOW_PREFIX  perfflow install to use (default: build/install, which
#                    scripts/build.sh creates)
#   CXX              clang++ matching the plugin's LLVM, with OpenMP
#                    (default: clang++-19; Debian: apt-get install libomp-19-dev)
#   BENCH_RUNS       runs of each variant; the table shows medians (default 5)
#
# Builds bench/omp_kernel.cpp with -O2 -fopenmp twice: woven through the
# plugin and linked to the shared runtime, and plain. Then runs the plain
# program, the woven one with log-format=array (JSON) and the woven one with
# log-format=perfetto, one after the other in turn, BENCH_RUNS rounds (so
# slow phases of a shared machine spread over all variants), each run in a
# fresh scratch directory with clock=auto and OMP_NUM_THREADS unset (one
# thread per core). Wall and CPU (user + system, all threads) are those of
# the whole process, the final flush of the trace included, as bash's
# `time` reports them. The first run of each traced variant is checked with
# `perfflow-trace check --expect-events` (every event the program made is in
# the trace). Prints one markdown table; nothing here fails on a time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
prefix=${PERFFLOW_PREFIX:-$root/build/install}
cxx=${CXX:-clang++-19}
runs=${BENCH_RUNS:-5}
n=${1:-1024} steps=${2:-300} particles=${3:-80000}

die() { echo "bench/omp_kernel.sh: $*" >&2; exit 1; }
. "$here/lib.sh"

for v in runs n steps particles; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive whole number, got '${!v}'"
done
command -v "$cxx" >/dev/null || die "compiler '$cxx' not found (set CXX)"
[[ -d $prefix ]] && prefix=$(cd "$prefix" && pwd)
plugin=$prefix/lib/libWeavePass.so
trace_cli=$prefix/bin/perfflow-trace
for f in "$plugin" "$prefix/lib/libperfflow_runtime.so" "$trace_cli"; do
    [[ -f $f ]] || die "$f is missing: run 'bash scripts/build.sh' first (or point PERFFLOW_PREFIX at an install)"
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-omp-kernel.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# --- build ---------------------------------------------------------------------

# Compiled from inside bench/ so that the events' "cat" is the short
# "omp_kernel.cpp" whatever the checkout's path.
woven=$scratch/omp_kernel_woven
plain=$scratch/omp_kernel_plain
cxxflags=(-O2 -std=c++17 -fopenmp)
(cd "$here" && "$cxx" "${cxxflags[@]}" omp_kernel.cpp -o "$plain") \
    || die "building the plain program failed (OpenMP for $cxx: apt-get install libomp-19-dev)"
(cd "$here" && "$cxx" "${cxxflags[@]}" -fpass-plugin="$plugin" omp_kernel.cpp \
    -L"$prefix/lib" -lperfflow_runtime -Wl,-rpath,"$prefix/lib" -o "$woven") \
    || die "building the woven program failed"
grep -qa perfflow_site_enter "$woven" \
    || die "the plugin wove nothing (is $plugin built for $cxx's LLVM?)"

# --- measure -------------------------------------------------------------------



variants=("plain|$plain|"
          "JSON (log-format=array)|$woven|log-format=array"
          "Perfetto (log-format=perfetto)|$woven|log-format=perfetto")
declare -A wall cpu kernel bytes
calls= checksum= threads=
for ((r = 1; r <= runs; r++)); do
    for v in "${variants[@]}"; do
        IFS='|' read -r label bin opts <<<"$v"
        echo "bench: $label, run $r/$runs" >&2
        rundir=$scratch/run
        rm -rf "$rundir" && mkdir "$rundir"
        # bash's `time` of the one command: real, user and system seconds.
        times=$( { TIMEFORMAT='%R %U %S'; time (cd "$rundir" && env -u OMP_NUM_THREADS -u PERFFLOW_OPTIONS \
            ${opts:+PERFFLOW_OPTIONS=$opts} "$bin" "$n" "$steps" "$particles" >"$scratch/line"); } 2>&1 ) \
            || die "$label failed: $times"
        read -r real user sys <<<"$times"
        line=$(cat "$scratch/line")
        wall[$label]+="$real "
        cpu[$label]+="$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') "
        kernel[$label]+="$(field kernel_s "$line") "
        if [[ -z $calls ]]; then
            calls=$(field calls "$line") checksum=$(field checksum "$line") threads=$(field threads "$line")
        fi
        [[ $(field checksum "$line") == "$checksum" ]] \
            || die "$label computed checksum $(field checksum "$line"), the first run $checksum"
        if [[ $bin == "$woven" && $r == 1 ]]; then
            shopt -s nullglob
            files=("$rundir"/perfflow.*)
            shopt -u nullglob
            ((${#files[@]} == 1)) || die "$label left ${#files[@]} trace files, expected 1"
            "$trace_cli" check --expect-events=$((2 * calls)) "${files[0]}" >&2 \
                || die "$label: the trace does not hold the program's $((2 * calls)) events"
            bytes[$label]=$(stat -c %s "${files[0]}")
        fi
        rm -rf "$rundir"
    done
done

model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command:  ${BENCH_RUNS:+BENCH_RUNS=$BENCH_RUNS }bash bench/omp_kernel.sh $n $steps $particles"
echo "machine:  $(nproc) CPUs, ${model:-unknown CPU}, Linux $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "program:  N=$n STEPS=$steps PARTICLES=$particles, $threads OpenMP threads, $calls woven calls ($((2 * calls)) events), median of $runs runs"
echo
echo "| variant | wall s | x plain | CPU s (all threads) | x plain CPU | kernel s | events/s (of plain wall) | events/s (of plain CPU / threads) | trace MB |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|"
plain_wall=$(median ${wall[plain]}) plain_cpu=$(median ${cpu[plain]})
for v in "${variants[@]}"; do
    IFS='|' read -r label _ _ <<<"$v"
    w=$(median ${wall[$label]}) c=$(median ${cpu[$label]}) k=$(median ${kernel[$label]})
    mb=-
    [[ -n ${bytes[$label]:-} ]] && mb=$(awk -v b="${bytes[$label]}" 'BEGIN { printf "%.1f", b / 1e6 }')
    awk -v l="$label" -v w="$w" -v pw="$plain_wall" -v c="$c" -v pc="$plain_cpu" -v k="$k" \
        -v e=$((2 * calls)) -v mb="$mb" -v t="$threads" \
        'BEGIN { printf "| %s | %.3f | %.3fx | %.3f | %.3fx | %.3f | %.2f M | %.2f M | %s |\n", l, w, w / pw, c, c / pc, k, e / pw / 1e6, e * t / pc / 1e6, mb }'
done
echo
echo "wall and CPU: the whole process (start-up and the trace's final flush included); kernel s: the time steps alone."
echo "events/s of plain CPU / threads: the event rate the program has with every core to itself (on a busy machine its wall time stretches)."
echo "Per run:"
for v in "${variants[@]}"; do
    IFS='|' read -r label _ _ <<<"$v"
    echo "  $label: wall ${wall[$label]}"
done
