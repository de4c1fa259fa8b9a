#!/usr/bin/env bash
# A woven program run with the metric sampler on: its trace holds counter
# tracks (process and system metrics) next to its spans, and stays valid.
#   sampler.sh WORKDIR PROGRAM    (PERFFLOW_TRACE names perfflow-trace)
set -u
workdir=$1 program=$2
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
PERFFLOW_OPTIONS="sampler=True:sampler-interval=20ms:sampler-metrics=proc,system" "$program" >out.txt 2>err.txt \
  || fail "program failed: $(cat err.txt)"
trace=$(ls perfflow.array.*.pfw) || fail "no trace"
"$PERFFLOW_TRACE" check "$trace" || fail "trace is not valid"
jq -e '[.[] | select(.ph == "B" and .name == "phase")] | length == 8' "$trace" >/dev/null || fail "spans missing"
for track in "proc cpu (%)" "proc rss (bytes)" "cpu total (%)" "mem used (bytes)"; do
  n=$(jq --arg t "$track" '[.[] | select(.ph == "C" and .name == $t)] | length' "$trace")
  [ "$n" -ge 3 ] || fail "counter track '$track' has $n samples, expected at least 3"
done
jq -e '[.[] | select(.ph == "C" and .name == "proc rss (bytes)") | .args.value] | max >= 16 * 1048576' "$trace" >/dev/null \
  || fail "proc rss never showed the 16 MiB block"
jq -e '[.[] | select(.name == "perfflow_sampler")] | length == 1' "$trace" >/dev/null || fail "no sampler metadata"
if grep -q "unavailable" err.txt; then fail "unavailable sources were reported on stderr"; fi
echo "sampler ok"
