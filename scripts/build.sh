#!/usr/bin/env bash
# Configures and builds perfflow in ./build with the host-config for this
# machine (PERFFLOW_HOST_CONFIG overrides it) and installs it into
# ./build/install (PERFFLOW_PREFIX overrides it). PERFFLOW_BUILD_DIR names
# another build directory; arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
host_config=${PERFFLOW_HOST_CONFIG:-host-configs/debian12-clang19.cmake}
build=${PERFFLOW_BUILD_DIR:-build}
prefix=${PERFFLOW_PREFIX:-$PWD/$build/install}
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$build"
cmake -C "$host_config" -S . -B "$build" -DCMAKE_INSTALL_PREFIX="$prefix" "$@" >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" -j "$jobs"
cmake --install "$build" >/dev/null
