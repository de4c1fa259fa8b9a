#!/usr/bin/env bash
# The demo: installs what is missing, builds and installs perfflow, compiles
# the annotated example workflow through the plugin exactly as a user would,
# runs it, and summarises the trace it leaves; then runs it once more under
# perfflow-monitor, which writes the job's metrics and an HTML report; then
# runs a traced Python driver (examples/driver.py) that launches it; and
# last, scripts/demo-workflow.sh: the workflow under 2 x 2 treatment factors.
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
echo "== running it again under perfflow-monitor"
(cd "$out" && "$prefix/bin/perfflow-monitor" -i 50ms -r -e csv -d monitor --name demo -- ./workflow)
echo "metrics:  $(ls -d "$out"/monitor/metrics/*.json | tr '\n' ' ')"
echo "report:   $(ls "$out"/monitor/job-report-*.html)"
monitored=$(ls -t "$out"/perfflow.array.*.pfw | head -n 1)
echo
echo "Open it in Perfetto: https://ui.perfetto.dev -> Open trace file -> $trace"
echo "The monitored run's trace and the node's counters, to open together:"
echo "  $monitored"
echo "  $(ls "$out"/monitor/perfflow.monitor.*.pfw)"
echo
echo "== a Python driver (examples/driver.py) traced with the perfflow package, launching the workflow"
# The extension is built in the CMake build's cargo directory, which already
# holds the runtime's release build, and put next to the package's sources;
# `pip install ./python` installs the same package for good.
CARGO_TARGET_DIR=$PWD/build/cargo cargo build --release --quiet -p perfflow-python
site=$out/python
mkdir -p "$site"
cp -r python/perfflow python/perfflowaspect "$site"/
cp build/cargo/release/lib_native.so "$site"/perfflow/_native.abi3.so
repo=$PWD
rm -rf "$out/driver" && mkdir -p "$out/driver"
(cd "$out/driver" && PYTHONPATH="$site" python3 "$repo/examples/driver.py" "$out/workflow")
for t in "$out"/driver/perfflow.*.pfw; do
  "$prefix/bin/perfflow-trace" check "$t"
done
python_trace=$(grep -l '"prepare"' "$out"/driver/perfflow.*.pfw)
"$prefix/bin/perfflow-trace" summary "$python_trace"
echo
echo "== the workflow under 2 x 2 treatment factors (scripts/demo-workflow.sh)"
bash scripts/demo-workflow.sh "$prefix"
