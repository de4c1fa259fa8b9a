#!/usr/bin/env bash
# Runs every test: the crates' own tests (cargo, including the monitor's
# report rendered in headless Chromium and its Parquet files read back with
# pyarrow), then the build and the ctest suite (woven programs with their
# traces checked, IR tests, diagnostics, the installed CMake package and
# pkg-config file), then the Python package's tests (pytest, against the
# extension built here and the build's plugin and perfflow-trace); then the
# weaver's tests and the ctest suite again on LLVM 14
# (PERFFLOW_TEST_LLVMS lists others, such as "14 15 16", or none with "").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh --tests
export PATH="$HOME/.cargo/bin:$PATH"
export LLVM_SYS_191_PREFIX=${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}
echo "== cargo test"
cargo test --workspace --locked
echo "== cargo test (perfflow-monitor with HDF5)"
# -e hdf5 is the feature `hdf5`, off in the workspace build (see
# monitor/Cargo.toml): its unit and export tests again with it on.
cargo test -p perfflow-monitor --locked --features hdf5 --lib \
  --test every_export_format_reads_back_in_pandas \
  --test hdf5_export_keeps_text_beyond_ascii_and_empty_groups \
  --test command_line_flags_parse_into_the_config
echo "== build"
bash scripts/build.sh
echo "== ctest"
ctest --test-dir build --output-on-failure --timeout 300 -j "$(nproc 2>/dev/null || echo 2)"
echo "== python"
cargo build -p perfflow-python --locked
PERFFLOW_BUILD_DIR="$PWD/build" python3 -m pytest -q -p no:cacheprovider python/tests
# Other LLVMs (PERFFLOW_TEST_LLVMS, default "14"; "14 15 16" adds the rest of
# Debian 12's, about 4 minutes more; 14 is its default clang, with typed pointers): the weaver's tests and the whole ctest suite again, built
# with that clang. Each build tree shares build/cargo, so only the weaver is
# rebuilt; no second Python wheel.
for llvm in ${PERFFLOW_TEST_LLVMS-14}; do
  echo "== LLVM $llvm: cargo test (weaver)"
  env "LLVM_SYS_${llvm}0_PREFIX=/usr/lib/llvm-$llvm" \
    cargo test -p perfflow-weaver --locked --no-default-features --features "llvm$llvm"
  echo "== LLVM $llvm: build"
  PERFFLOW_BUILD_DIR="build-llvm$llvm" PERFFLOW_HOST_CONFIG="host-configs/debian12-clang$llvm.cmake" \
    bash scripts/build.sh -DPERFFLOW_CARGO_TARGET_DIR="$PWD/build/cargo" -DPERFFLOW_PYTHON_WHEEL=OFF
  echo "== LLVM $llvm: ctest"
  ctest --test-dir "build-llvm$llvm" --output-on-failure --timeout 300 -j "$(nproc 2>/dev/null || echo 2)"
  rm -rf "build-llvm$llvm"   # about 300 MB; its weaver stays in build/cargo for the next run
done
