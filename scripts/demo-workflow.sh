#!/usr/bin/env bash
# Treatments demo: runs the example workflow (examples/workflow.cpp) five
# times under each of 2 x 2 treatment factors, labelled through the runtime's
# `labels` option:
#   logdir  where the trace is written: `disk` (build/demo-workflow) or `shm`
#           (tmpfs, /dev/shm);
#   blocks  the workload: 12 or 24 input blocks.
# It imports every run into one database (the labels arrive with the traces),
# prints what each factor does to the wall time and to the mean `workflow::simulate`
# call, alone and given the other factor, and compares the two workloads.
#
#   bash scripts/demo-workflow.sh            # builds perfflow into build/install first
#   bash scripts/demo-workflow.sh PREFIX     # uses perfflow installed in PREFIX
set -euo pipefail
prefix=
if [ $# -ge 1 ]; then prefix=$(cd "$1" && pwd); fi
cd "$(dirname "$0")/.."
if [ -z "$prefix" ]; then
  bash scripts/setup-debian.sh
  export PATH="$HOME/.cargo/bin:$PATH"
  echo "== building perfflow (first build compiles the Rust crates: a few minutes)"
  bash scripts/build.sh
  prefix=$PWD/build/install
fi
trace_tool=$prefix/bin/perfflow-trace
out=$PWD/build/demo-workflow
rm -rf "$out" && mkdir -p "$out"
# tmpfs: /dev/shm where the machine has it writable, else a note and the
# system's temporary directory (the factor then compares two disks).
if shm=$(mktemp -d /dev/shm/perfflow-demo.XXXXXX 2>/dev/null); then :; else
  echo "note: /dev/shm is not writable here; logdir=shm uses $(dirname "$(mktemp -u)")"
  shm=$(mktemp -d)
fi
trap 'rm -rf "$shm"' EXIT

echo "== compiling examples/workflow.cpp through the plugin"
clang++-19 -O2 -g -fpass-plugin="$prefix/lib/libWeavePass.so" examples/workflow.cpp \
  -I"$prefix/include" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lperfflow_runtime -o "$out/workflow"

echo "== 5 repeats x logdir {disk, shm} x blocks {12, 24}, imported into $out/runs.sqlite"
for repeat in 1 2 3 4 5; do
  for logdir in disk shm; do
    for blocks in 12 24; do
      run=$logdir-$blocks-$repeat
      if [ "$logdir" = shm ]; then dir=$shm/$run; else dir=$out/traces/$run; fi
      (cd "$out" && PERFFLOW_OPTIONS="log-dir=$dir:labels=logdir=$logdir,blocks=$blocks" \
        ./workflow "$blocks" >/dev/null)
      "$trace_tool" db -o "$out/runs.sqlite" "$dir" --run "$run" >/dev/null
      rm -rf "$dir"
    done
  done
done
"$trace_tool" sql "$out/runs.sqlite" \
  "SELECT l.key, l.value, COUNT(*) AS runs FROM run_label l GROUP BY l.key, l.value"
echo
echo "== what each factor does to the wall time"
"$trace_tool" treatments "$out/runs.sqlite" --score wall
echo
echo "== ... and to the mean time of one workflow::simulate call"
"$trace_tool" treatments "$out/runs.sqlite" --score span:workflow::simulate
echo
echo "== compare: 12 blocks (A) against 24 blocks (B), on disk"
"$trace_tool" compare --db "$out/runs.sqlite" \
  disk-12-1,disk-12-2,disk-12-3,disk-12-4,disk-12-5 disk-24-1,disk-24-2,disk-24-3,disk-24-4,disk-24-5
