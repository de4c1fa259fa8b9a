#!/usr/bin/env bash
# Runs a woven program in a fresh directory and checks the trace it leaves.
#   run_traced.sh WORKDIR EXPECTED_EXIT PROGRAM -- [perfflow-trace check options]
# Needs PERFFLOW_TRACE (the perfflow-trace tool) in the environment.
set -u
workdir=$1 expected_exit=$2 program=$3
shift 3
[ "${1:-}" = "--" ] && shift
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1

"$program" >stdout.txt 2>stderr.txt &
pid=$!
wait "$pid"
status=$?
if [ "$status" -ne "$expected_exit" ]; then
  echo "FAIL: $program exited with $status, expected $expected_exit" >&2
  cat stdout.txt stderr.txt >&2
  exit 1
fi

expected="perfflow.array.$(hostname).$pid.pfw"
traces=(perfflow.*.pfw)
if [ "${#traces[@]}" -ne 1 ] || [ "${traces[0]}" != "$expected" ]; then
  echo "FAIL: expected exactly one trace named $expected, found: ${traces[*]}" >&2
  exit 1
fi
if command -v jq >/dev/null && ! jq empty "$expected"; then
  echo "FAIL: jq rejects $expected" >&2
  exit 1
fi
exec "$PERFFLOW_TRACE" check "$expected" "$@"
