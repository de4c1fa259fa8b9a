#!/usr/bin/env bash
# The demo: installs what is missing, builds and installs perfflow, compiles
# the annotated example workflow through the plugin exactly as a user would,
# runs it, and summarises the trace it leaves.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
export PATH="$HOME/.cargo/bin:$PATH"
echo "== building perfflow (first build compiles the Rust crates: a few minutes)"
bash scripts/build.sh
prefix=$PWD/build/install
out=$PWD/build/demo
rm -rf "$out" && mkdir -p "$out"

echo "== compiling examples/workflow.cpp through the plugin"
(
  set -x
  clang++-19 -O2 -g -fpass-plugin="$prefix/lib/libWeavePass.so" examples/workflow.cpp \
    -I"$prefix/include" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lperfflow_runtime -o "$out/workflow"
)
echo "== running it"
(cd "$out" && ./workflow)
trace=$(ls "$out"/perfflow.*.pfw)
echo "== trace: $trace"
"$prefix/bin/perfflow-trace" check "$trace"
"$prefix/bin/perfflow-trace" summary "$trace"
echo
echo "Open it in Perfetto: https://ui.perfetto.dev -> Open trace file -> $trace"
