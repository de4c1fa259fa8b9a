#!/usr/bin/env bash
# Installs the wheel the build made into a fresh virtual environment,
# without the network, and runs a program traced through it there: the
# trace holds exactly its events, written by the runtime the wheel carries.
#   python_wheel.sh WHEEL_DIR WORKDIR      (PERFFLOW_TRACE: perfflow-trace)
set -eu
wheels=$1 work=$2
rm -rf "$work" && mkdir -p "$work/run"
wheel=$(ls "$wheels"/perfflow-*.whl)
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index "$wheel"
cat >"$work/program.py" <<'PY'
import perfflow
import perfflowaspect.aspect


@perfflowaspect.aspect.critical_path()
def step(x):
    return x + 1


for i in range(3):
    step(i)
with perfflow.region("wrap_up"):
    pass
print(perfflow.runtime_library())
PY
runtime=$(cd "$work/run" && env -u PERFFLOW_OPTIONS -u PERFFLOW_RUNTIME_LIB -u PYTHONPATH \
  "$work/venv/bin/python" "$work/program.py")
case $runtime in
  "$work"/venv/*) ;;
  *) echo "the runtime came from $runtime, not from the venv's package" >&2; exit 1 ;;
esac
"$PERFFLOW_TRACE" check "$work"/run/perfflow.array.*.pfw --expect-events 8 --expect-names step,wrap_up
