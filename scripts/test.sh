#!/usr/bin/env bash
# Runs every test: the crates' own tests (cargo, including the monitor's
# report rendered in headless Chromium and its Parquet files read back with
# pyarrow), then the build and the ctest suite (woven programs with their
# traces checked, IR tests, diagnostics, the installed CMake package and
# pkg-config file), then the Python package's tests (pytest, against the
# extension built here and the build's plugin and perfflow-trace).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh --tests
export PATH="$HOME/.cargo/bin:$PATH"
export LLVM_SYS_191_PREFIX=${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}
echo "== cargo test"
cargo test --workspace --locked
echo "== build"
bash scripts/build.sh
echo "== ctest"
ctest --test-dir build --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
echo "== python"
cargo build -p perfflow-python --locked
PERFFLOW_BUILD_DIR="$PWD/build" python3 -m pytest -q -p no:cacheprovider python/tests
