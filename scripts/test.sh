#!/usr/bin/env bash
# Runs every test: the crates' own tests (cargo, including the monitor's
# report rendered in headless Chromium and its Parquet files read back with
# pyarrow), then the build and the ctest suite (woven programs with their
# traces checked, IR tests, diagnostics, the installed CMake package and
# pkg-config file), then the Python package's tests (pytest, against the
# extension built here and the build's plugin and perfflow-trace); then the
# weaver's tests and the ctest suite again on LLVM 14.
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
# LLVM 14 (Debian 12's default clang, typed pointers): the weaver's tests
# and the whole ctest suite again, built with clang 14. The build tree shares
# build/cargo, so only the weaver is rebuilt; no second Python wheel.
echo "== LLVM 14: cargo test (weaver)"
LLVM_SYS_140_PREFIX=${LLVM_SYS_140_PREFIX:-/usr/lib/llvm-14} \
  cargo test -p perfflow-weaver --locked --no-default-features --features llvm14
echo "== LLVM 14: build"
PERFFLOW_BUILD_DIR=build-llvm14 PERFFLOW_HOST_CONFIG=host-configs/debian12-clang14.cmake \
  bash scripts/build.sh -DPERFFLOW_CARGO_TARGET_DIR="$PWD/build/cargo" -DPERFFLOW_PYTHON_WHEEL=OFF
echo "== LLVM 14: ctest"
ctest --test-dir build-llvm14 --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
rm -rf build-llvm14   # about 300 MB; its weaver stays in build/cargo for the next run
