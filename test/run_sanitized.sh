#!/usr/bin/env bash
# Runs a woven program built with a sanitizer in a fresh directory: it must
# exit with its own status within a minute, the sanitizer must report
# nothing, and every trace (the parent's and each forked child's) must pass
# perfflow-trace check.
#   run_sanitized.sh WORKDIR EXPECTED_EXIT EXPECTED_TRACES PROGRAM
# Needs PERFFLOW_TRACE (the perfflow-trace tool) in the environment; the
# sanitizer's options (suppressions) come from the environment too.
set -u
workdir=$1 expected_exit=$2 expected_traces=$3 program=$4
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
fail() { echo "FAIL: $*" >&2; cat stdout.txt >&2; head -c 20000 stderr.txt >&2; exit 1; }

# A hang fails in a minute instead of at ctest's limit. SIGKILL, to the
# whole process group: a child hung inside the sanitizer's exit may block
# every other signal, and would outlive the test.
timeout -s KILL 60 "$program" >stdout.txt 2>stderr.txt
status=$?
[ "$status" -ne 137 ] || fail "$program hung: killed after 60 s"
[ "$status" -eq "$expected_exit" ] || fail "$program exited with $status, expected $expected_exit"
# A report starts with "WARNING: ThreadSanitizer" or "ERROR: AddressSanitizer"
# (or LeakSanitizer); perfflow's own notes may name the sanitizer.
if grep -Eq "(WARNING|ERROR): [A-Za-z]*Sanitizer" stderr.txt; then fail "the sanitizer reported something"; fi
traces=(perfflow.*.pfw)
[ "${#traces[@]}" -eq "$expected_traces" ] || fail "expected $expected_traces traces, found: ${traces[*]}"
for trace in "${traces[@]}"; do
  "$PERFFLOW_TRACE" check "$trace" >check.txt 2>&1 || { cat check.txt >&2; fail "$trace does not check"; }
done
echo "ok: exit $status, ${#traces[@]} traces"
