#!/usr/bin/env bash
# Runs the woven fan-out / fan-in workflow (programs/fan_out_fan_in.c) in a
# fresh directory and checks its critical path by the identity of its
# spans, never by their times: it runs through the long worker's task and
# reply, and through no short worker's; the merged trace with the path as a
# track passes check.
#   critical_path.sh WORKDIR PROGRAM
# Needs PERFFLOW_TRACE (the perfflow-trace tool) and jq.
set -u
workdir=$1 program=$2
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
fail() { echo "FAIL: $*" >&2; cat stderr.txt >&2 2>/dev/null; exit 1; }

"$program" >stdout.txt 2>stderr.txt || fail "$program exited with $?"
traces=(perfflow.*.pfw)
[ "${#traces[@]}" -eq 4 ] || fail "expected 4 traces, found: ${traces[*]}"
"$PERFFLOW_TRACE" critical-path . --json -o merged.json >path.json 2>stderr.txt \
  || fail "critical-path failed"
spans=$(jq -r '[.steps[] | select(.kind == "span") | .name] | join(",")' path.json)
echo "spans on the path: $spans"
for name in launch_long task_long reply_long collect_long; do
  case ",$spans," in *",$name,"*) ;; *) fail "$name is not on the path" ;; esac
done
for name in task_a reply_a task_b reply_b collect_a collect_b; do
  case ",$spans," in *",$name,"*) fail "$name is on the path" ;; esac
done
flows=$(jq -r '[.steps[] | select(.kind == "flow") | .name] | join(",")' path.json)
[ "$flows" = "go_long,back_long" ] || fail "expected the flows go_long,back_long, found $flows"
# The long worker's steps are in one process other than the driver's.
pids=$(jq -r '[.steps[] | select(.name == "task_long" or .name == "reply_long") | .place.pid] | unique | length' path.json)
[ "$pids" = 1 ] || fail "the long worker's steps are in $pids processes"
"$PERFFLOW_TRACE" check merged.json >check.txt 2>&1 || { cat check.txt >&2; fail "the merged trace does not check"; }
track=$(jq '[.[] | select(.cat == "critical_path")] | length' merged.json)
steps=$(jq '.steps | length' path.json)
[ "$track" = "$steps" ] || fail "the track has $track events for $steps steps"
echo "ok: $steps steps"
