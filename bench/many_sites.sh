#!/usr/bin/env bash
# bench/many_sites.sh - instructions per woven call when a thread calls
# many distinct sites in turn, for each trace format.
#
# Usage: bash bench/many_sites.sh [SITES...]   (default 10 500 1500 4000 20000)
#
# Environment:
#   CALLS  enter/exit pairs of the shorter run (default 400000)
#
# Builds the runtime (release) and bench/many_sites.c against its static
# library, then for each number of sites and each format (log-format=array
# and perfetto, clock=tsc) runs it under callgrind with CALLS and 2 x CALLS
# pairs, all threads counted, and prints the difference over CALLS: the
# instructions of a call once every site has had its first event (the
# start-up and each site's first events cancel out). Callgrind counts are
# stable on a loaded machine. Prints figures only.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
calls=${CALLS:-400000}
sites_list=("$@")
((${#sites_list[@]})) || sites_list=(10 500 1500 4000 20000)

die() { echo "bench/many_sites.sh: $*" >&2; exit 1; }
. "$here/lib.sh"
[[ $calls =~ ^[1-9][0-9]*$ ]] || die "CALLS must be a positive whole number, got '$calls'"
for s in "${sites_list[@]}"; do
    [[ $s =~ ^[1-9][0-9]*$ ]] || die "SITES must be positive whole numbers, got '$s'"
done
command -v valgrind >/dev/null || die "valgrind not found (apt-get install valgrind)"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/perfflow-many-sites.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

bin=$scratch/many_sites
build_against_runtime "$root" "$here/many_sites.c" "$bin"

# instructions SITES CALLS FORMAT -> the whole run's instructions, all threads.
instructions() {
    local dir=$scratch/run
    rm -rf "$dir" && mkdir "$dir"
    (cd "$dir" && PERFFLOW_OPTIONS=log-format=$3:clock=tsc valgrind --tool=callgrind \
        --callgrind-out-file="$dir/cg.out" "$bin" "$1" "$2" >/dev/null 2>&1) \
        || die "$3 with $1 sites under callgrind failed"
    awk '/^(summary|totals):/ { print $2; exit }' "$dir/cg.out"
}

echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "command:  ${CALLS:+CALLS=$CALLS }bash bench/many_sites.sh${*:+ $*}"
echo "calls:    $calls and $((2 * calls)) pairs, the difference over $calls; clock=tsc"
echo
echo "| sites | JSON (array), instr/call | Perfetto, instr/call |"
echo "|--:|--:|--:|"
for s in "${sites_list[@]}"; do
    row="| $s"
    for format in array perfetto; do
        echo "bench: $s sites, $format" >&2
        short=$(instructions "$s" "$calls" "$format")
        long=$(instructions "$s" $((2 * calls)) "$format")
        row+=" | $(awk -v a="$short" -v b="$long" -v n="$calls" 'BEGIN { printf "%.0f", (b - a) / n }')"
    done
    echo "$row |"
done
