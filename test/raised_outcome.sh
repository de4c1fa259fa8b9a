#!/usr/bin/env bash
# Runs the woven programs/raised_outcome.cpp (an exception thrown by
# `fails`, unwinding through `passes`, caught by `handles`) once per trace
# format, and checks that the trace and the database say `raised` for
# exactly the two spans the exception left and `returned` for the others.
#   raised_outcome.sh WORKDIR PROGRAM
# Needs PERFFLOW_TRACE (the perfflow-trace tool) and jq.
set -u
workdir=$1 program=$2
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
fail() { echo "FAIL: $*" >&2; cat stderr.txt >&2 2>/dev/null; exit 1; }

expected="fails,raised,1
fails,returned,2
handles,returned,3
passes,raised,1
passes,returned,2"
for format in array perfetto; do
  mkdir "$format" && cd "$format" || exit 1
  PERFFLOW_OPTIONS="log-format=$format" "$program" >stdout.txt 2>stderr.txt \
    || fail "$program ($format) exited with $?"
  traces=(perfflow.*)
  [ "${#traces[@]}" -eq 1 ] || fail "expected one trace, found: ${traces[*]}"
  trace=${traces[0]}
  "$PERFFLOW_TRACE" check "$trace" >check.txt 2>&1 || { cat check.txt >&2; fail "$trace does not check"; }
  if [ "$format" = array ]; then
    raised=$(jq -c '[.[] | select(.args.outcome == "raised") | [.name, .ph]]' "$trace")
    [ "$raised" = '[["fails","E"],["passes","E"]]' ] \
      || fail "the ends marked raised in $trace are $raised"
  fi
  "$PERFFLOW_TRACE" db -o runs.sqlite "$trace" >db.txt 2>&1 || { cat db.txt >&2; fail "db failed"; }
  rows=$("$PERFFLOW_TRACE" sql runs.sqlite --csv \
    "SELECT name, outcome, COUNT(*) FROM span GROUP BY name, outcome ORDER BY name, outcome" | tail -n +2)
  [ "$rows" = "$expected" ] || fail "($format) spans by outcome:
$rows
expected:
$expected"
  # The raised `fails` is inside the raised `passes`, inside a `handles`
  # that returned.
  chain=$("$PERFFLOW_TRACE" sql runs.sqlite --csv \
    "SELECT c.outcome, p.name, p.outcome, g.name, g.outcome FROM span c
     JOIN span p ON p.id = c.parent JOIN span g ON g.id = p.parent
     WHERE c.name = 'fails' AND c.outcome = 'raised'" | tail -n +2)
  [ "$chain" = "raised,passes,raised,handles,returned" ] \
    || fail "($format) the raised fails sits in: $chain"
  cd ..
done
echo "ok"
