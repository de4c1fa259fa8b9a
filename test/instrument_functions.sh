#!/usr/bin/env bash
# A program with no annotations, built by another compiler (GCC) with
# -finstrument-functions and linked with the runtime, is traced through the
# filter file by the runtime's hooks: with the shared and the static
# runtime; every instrumented function without a filter; a clear message
# and no trace from a filter file that cannot be used.
#   instrument_functions.sh CXX LIBDIR INCLUDEDIR SOURCE FILTER WORKDIR
# Needs PERFFLOW_TRACE (the perfflow-trace tool) in the environment.
set -u
cxx=$1 libdir=$2 include=$3 src=$4 filter=$5 work=$6
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
names="physics::Solver::step,checksum,scale<int>"

"$cxx" -O2 -g -finstrument-functions -I"$include" "$src" -L"$libdir" -Wl,-rpath,"$libdir" \
  -lperfflow_runtime -o "$work/shared" || fail "cannot build with the shared runtime"
"$cxx" -O2 -g -finstrument-functions -I"$include" "$src" "$libdir/libperfflow_runtime.a" \
  -lpthread -ldl -lm -o "$work/static" || fail "cannot build with the static runtime"

# run NAME PROGRAM [VAR=VALUE...]: runs PROGRAM in WORK/NAME; prints the trace.
run() {
  local dir=$work/$1 exe=$2
  shift 2
  mkdir -p "$dir"
  (cd "$dir" && env "$@" "$exe" >stdout.txt 2>stderr.txt) || fail "$exe exited with $? ($*)"
  ls "$dir"/perfflow.*.pfw 2>/dev/null
}

for variant in shared static; do
  trace=$(run "filtered_$variant" "$work/$variant" PERFFLOW_WEAVE_FILTER="$filter")
  "$PERFFLOW_TRACE" check "$trace" --expect-events 15 --expect-names "$names" --expect-phases B,E,i \
    || fail "$variant runtime: the filter's functions, and only they, should be traced"
done

trace=$(run unfiltered "$work/shared")
"$PERFFLOW_TRACE" check "$trace" --expect-events 32 \
  --expect-names "main,physics::Solver::step,physics::Solver::helper,checksum,untraced,scale<int>" \
  || fail "without a filter every instrumented function should be traced"

printf 'include function x @critical_path(pointcut=sometimes)\n' >"$work/bad.filter"
trace=$(run bad_filter "$work/shared" PERFFLOW_WEAVE_FILTER="$work/bad.filter")
[ -z "$trace" ] || fail "a filter file that cannot be used should trace nothing, found $trace"
grep -q "bad.filter:1: .*sometimes" "$work/bad_filter/stderr.txt" \
  || { cat "$work/bad_filter/stderr.txt" >&2; fail "no message naming the bad filter file and line"; }
echo "instrument functions ok"
