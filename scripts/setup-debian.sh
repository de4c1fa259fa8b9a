#!/usr/bin/env bash
# Installs what perfflow needs on Debian 12 (as root, or with sudo): clang 19,
# LLVM 19 headers and tools (opt, FileCheck), CMake, jq, pkg-config, a
# font (DejaVu: perfflow-monitor draws its PDF report and PNG plots with it)
# and the HDF5 library (perfflow-monitor's `-e hdf5` links it).
# With --tests, also what only the tests use: Chromium (the monitor's HTML
# report is rendered headless), poppler-utils (its PDF report is read back
# with pdfinfo and pdftotext), Python's pyarrow (exported Parquet files
# are read back by an independent reader), jsonschema (the monitor's
# files are checked against perfmon's schema), LLNL's Hatchet (profiles
# are loaded by the reader of record), python3-dev (a test embeds
# CPython in a traced program), clang's sanitizer runtimes and pytest (the
# Python package's tests), Parsl (a composite workflow test's driver),
# maturin and python3-venv (the wheel the build makes is installed in a venv),
# perfetto and protobuf (Perfetto's own classes decode .pftrace traces).
# A Rust toolchain (1.86 or newer, e.g. from rustup) must already be there.
set -euo pipefail
tests=0
case "${1:-}" in
  --tests) tests=1 ;;
  "") ;;
  *) echo "usage: bash scripts/setup-debian.sh [--tests]" >&2; exit 2 ;;
esac
packages=(clang-19 llvm-19-dev llvm-19-tools cmake make jq pkg-config fonts-dejavu-core libhdf5-dev)
if [ $tests -eq 1 ]; then
  # libclang-rt-19-dev: the sanitizer runtimes, for the ASan and TSan tests.
  packages+=(chromium poppler-utils python3 python3-dev python3-venv libclang-rt-19-dev)
  # Each LLVM of PERFFLOW_TEST_LLVMS (default 14): the suite
  # runs on it too. g++: a GCC-built program is traced through
  # -finstrument-functions.
  for llvm in ${PERFFLOW_TEST_LLVMS-14}; do
    packages+=("clang-$llvm" "llvm-$llvm-dev" "llvm-$llvm-tools")
    # The sanitizer runtimes have a package of their own except in LLVM 15.
    [ "$llvm" = 15 ] || packages+=("libclang-rt-$llvm-dev")
  done
  packages+=(g++)
  python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "perfflow: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Installs a PyPI package for the tests unless `check` (a shell command)
# says it is there. Debian's own Python refuses pip installs unless told
# (PEP 668).
pip_for_tests() {
  local package=$1 why=$2 check=$3
  [ $tests -eq 1 ] || return 0
  eval "$check" >/dev/null 2>&1 && return 0
  echo "perfflow: installing $package for the tests ($why)"
  python3 -m pip install --quiet "$package" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "$package"
}
pip_for_tests pyarrow "reads the monitor's Parquet exports" "python3 -c 'import pyarrow'"
pip_for_tests duckdb "queries perfflow-trace's Parquet export" "python3 -c 'import duckdb'"
pip_for_tests pandas "reads the monitor's exports in every format" "python3 -c 'import pandas'"
pip_for_tests tables "PyTables: pandas.read_hdf reads the monitor's HDF5 export" "python3 -c 'import tables'"
pip_for_tests jsonschema "validates the monitor's files against perfmon's schema" "python3 -c 'import jsonschema'"
pip_for_tests llnl-hatchet "reads perfflow-trace's call-tree profiles" "python3 -c 'import hatchet'"
pip_for_tests pytest "runs the Python package's tests" "python3 -c 'import pytest'"
pip_for_tests maturin "builds the Python wheel in the CMake build" "command -v maturin"
pip_for_tests parsl "the Parsl workflow example; wheels only, about 5 s" "python3 -c 'import parsl'"
pip_for_tests protobuf "the runtime behind Perfetto's generated classes" "python3 -c 'import google.protobuf'"
pip_for_tests perfetto "Perfetto's generated classes decode the .pftrace files" \
  "python3 -c 'from perfetto.protos.perfetto.trace import perfetto_trace_pb2'"
if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null; then
  echo "perfflow: cargo not found. Install a Rust toolchain (1.86 or newer), e.g. with rustup, and run again." >&2
  exit 1
fi
