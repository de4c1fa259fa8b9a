#!/usr/bin/env bash
# bench/writer_cost.sh - CPU, instructions and bytes per traced call, all
# threads included, for each trace format and clock, against the floor.
#
# Usage: bash bench/writer_cost.sh [N]   N enter/exit pairs per thread (default 5000000)
#
# Environment:
#   BENCH_RUNS  rounds of timed runs, every variant once a round; the table
#               shows medians (default 3)
#   CG_PAIRS    pairs of the callgrind runs (default 200000)
#
# Builds the runtime (release) and bench/writer_cost.c against its static
# library, then, for 1 and 2 threads: the floor (two CLOCK_MONOTONIC reads
# and two 16-byte stores per call) and perfflow_site_enter/exit with
# log-format=array or perfetto and clock=monotonic or tsc. Timed runs give
# ns/call (loop time per thread) and CPU ns/call (the process's user+system
# time until its trace is complete, over all calls); bytes/event is the
# trace's size over its events. The variants take turns within each round,
# so their medians compare side by side; the throughput of 2 threads over
# 1 follows the table. Then each variant runs once under
# callgrind (--separate-threads=yes) with CG_PAIRS pairs on one thread:
# instructions per call over all threads, on the recording thread, and per
# event on all other threads (the writer thread, the final flush at exit,
# start-up), which is what formatting costs. Callgrind counts are
# stable on a loaded machine; times are not. Prints figures only.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
runs=${BENCH_RUNS:-3}
cg_pairs=${CG_PAIRS:-200000}
n=${1:-5000000}

die() { echo "bench/writer_cost.sh: $*" >&2; exit 1; }
. "$here/lib.sh"
[[ $n =~ ^[1-9][0-9]*$ ]] || die "N must be a positive whole number, got '$n'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, got '$runs'"
[[ $cg_pairs =~ ^[1-9][0-9]*$ ]] || die "CG_PAIRS must be a positive whole number, got '$cg_pairs'"
command -v valgrind >/dev/null || die "valgrind not found (apt-get install valgrind)"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-writer-cost.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

bin=$scratch/writer_cost
build_against_runtime "$root" "$here/writer_cost.c" "$bin"


variants=("floor|floor|-"
          "JSON, monotonic|trace|log-format=array:clock=monotonic"
          "JSON, tsc|trace|log-format=array:clock=tsc"
          "Perfetto, monotonic|trace|log-format=perfetto:clock=monotonic"
          "Perfetto, tsc|trace|log-format=perfetto:clock=tsc")

# Rounds outermost: each round runs every variant on 1 and 2 threads in
# turn, so that the machine's changing load falls on all of them alike and
# the medians compare side by side.
declare -A ns_of cpu_of bytes_of
for ((r = 1; r <= runs; r++)); do
    for t in 1 2; do
        for v in "${variants[@]}"; do
            IFS='|' read -r label mode opts <<<"$v"
            echo "bench: $label, $t thread(s), round $r/$runs" >&2
            rundir=$scratch/run && rm -rf "$rundir" && mkdir "$rundir"
            line=$(cd "$rundir" && PERFFLOW_OPTIONS=${opts/#-/} "$bin" "$mode" "$t" "$n") || die "$label failed"
            ns_of[$t|$label]+="$(field ns_per_call "$line") "
            cpu_of[$t|$label]+="$(field cpu_ns_per_call "$line") "
            if ((r == 1)) && [[ $mode == trace ]]; then
                bytes_of[$t|$label]=$(cat "$rundir"/perfflow.* | wc -c)
            fi
        done
    done
done

rows=()
declare -A floor_ns floor_cpu median_ns
for t in 1 2; do
    for v in "${variants[@]}"; do
        IFS='|' read -r label mode opts <<<"$v"
        # shellcheck disable=SC2086 # the runs' figures, one word each
        m_ns=$(median ${ns_of[$t|$label]}) m_cpu=$(median ${cpu_of[$t|$label]})
        median_ns[$t|$label]=$m_ns
        if [[ $mode == floor ]]; then floor_ns[$t]=$m_ns floor_cpu[$t]=$m_cpu; fi
        bytes=${bytes_of[$t|$label]:--} per_event=-
        [[ $bytes != - ]] && per_event=$(awk -v b="$bytes" -v e=$((2 * n * t)) 'BEGIN { printf "%.1f", b / e }')
        rows+=("$label|$t|$m_ns|$m_cpu|$per_event")
    done
done

# Instructions, under callgrind, one thread.
declare -A ir_total ir_rec ir_other
for v in "${variants[@]}"; do
    IFS='|' read -r label mode opts <<<"$v"
    echo "bench: $label under callgrind" >&2
    rundir=$scratch/cg && rm -rf "$rundir" && mkdir "$rundir"
    (cd "$rundir" && PERFFLOW_OPTIONS=${opts/#-/} valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$rundir/cg.out" "$bin" "$mode" 1 "$cg_pairs" >/dev/null 2>&1) \
        || die "$label under callgrind failed"
    total=0 rec=0
    for f in "$rundir"/cg.out*; do
        ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$f")
        total=$((total + ${ir:-0}))
        # Thread 2 runs the loop: thread 1 is main, which only starts it.
        [[ $f == *-02 ]] && rec=${ir:-0}
    done
    ir_total[$label]=$(awk -v a="$total" -v p="$cg_pairs" 'BEGIN { printf "%.0f", a / p }')
    ir_rec[$label]=$(awk -v a="$rec" -v p="$cg_pairs" 'BEGIN { printf "%.0f", a / p }')
    # Everything but the recording thread: the writer thread, the final
    # flush (on the main thread, at exit), start-up and the signal watcher.
    ir_other[$label]=$(awk -v a="$total" -v r="$rec" -v p="$cg_pairs" \
        'BEGIN { printf "%.0f", (a - r) / (2 * p) }')
done

model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command:  ${BENCH_RUNS:+BENCH_RUNS=$BENCH_RUNS }${CG_PAIRS:+CG_PAIRS=$CG_PAIRS }bash bench/writer_cost.sh${1:+ $1}"
echo "machine:  $(nproc) CPUs, ${model:-unknown CPU}, Linux $(uname -r)"
echo "calls:    N = $n pairs per thread, median of $runs rounds (variants interleaved); callgrind: $cg_pairs pairs, 1 thread"
echo
echo "| variant | threads | ns/call | x floor | CPU ns/call | x floor CPU | instr/call (all threads) | instr/call (recording thread) | writer instr/event | bytes/event |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for row in "${rows[@]}"; do
    IFS='|' read -r label t ns cpu per_event <<<"$row"
    cg="-|-|-"
    ((t == 1)) && cg="${ir_total[$label]}|${ir_rec[$label]}|${ir_other[$label]}"
    IFS='|' read -r a b c <<<"$cg"
    awk -v l="$label" -v t="$t" -v ns="$ns" -v cpu="$cpu" -v fn="${floor_ns[$t]}" -v fc="${floor_cpu[$t]}" \
        -v a="$a" -v b="$b" -v c="$c" -v pe="$per_event" \
        'BEGIN { printf "| %s | %d | %.1f | %.2fx | %.1f | %.2fx | %s | %s | %s | %s |\n", l, t, ns, ns / fn, cpu, cpu / fc, a, b, c, pe }'
done
echo
echo "throughput of 2 threads over 1 (2 x ns/call on 1 thread / ns/call on 2):"
for v in "${variants[@]}"; do
    IFS='|' read -r label mode opts <<<"$v"
    awk -v l="$label" -v a="${median_ns[1|$label]}" -v b="${median_ns[2|$label]}" \
        'BEGIN { printf "  %s: %.2fx\n", l, 2 * a / b }'
done
echo
echo "ns/call: loop time per call of each thread; CPU ns/call: process CPU until the trace is complete / all calls."
echo "writer instr/event: instructions of every thread but the recording one (writer, final flush, start-up) per event."
