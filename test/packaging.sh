#!/usr/bin/env bash
# Installs this build into a staging prefix, then builds a user project
# against it twice, through find_package(perfflow) and through pkg-config,
# and checks the traces both leave.
#   packaging.sh BUILD_DIR CXX WORKDIR CONSUMER_SOURCE_DIR
set -eu
build=$1 cxx=$2 work=$3 src=$4
rm -rf "$work" && mkdir -p "$work"
stage=$work/stage
cmake --install "$build" --prefix "$stage" >/dev/null
trace=$stage/bin/perfflow-trace

# The manual pages and completions are installed where man and the shells look.
grep -q '^\.TH perfflow-trace 1' "$stage/share/man/man1/perfflow-trace.1"
grep -q '^\.TH perfflow-trace-merge 1' "$stage/share/man/man1/perfflow-trace-merge.1"
grep -q 'complete .*perfflow-trace' "$stage/share/bash-completion/completions/perfflow-trace"
grep -q '#compdef perfflow-trace' "$stage/share/zsh/site-functions/_perfflow-trace"
grep -q 'complete -c perfflow-trace' "$stage/share/fish/vendor_completions.d/perfflow-trace.fish"
grep -q '^\.TH perfflow-monitor 1' "$stage/share/man/man1/perfflow-monitor.1"
grep -q '^\.TH perfflow-monitor-merge 1' "$stage/share/man/man1/perfflow-monitor-merge.1"
grep -q 'complete .*perfflow-monitor' "$stage/share/bash-completion/completions/perfflow-monitor"
grep -q '#compdef perfflow-monitor' "$stage/share/zsh/site-functions/_perfflow-monitor"
grep -q 'complete -c perfflow-monitor' "$stage/share/fish/vendor_completions.d/perfflow-monitor.fish"

run_and_check() {
  local dir=$1 exe=$2
  (cd "$dir" && "$exe" >/dev/null)
  "$trace" check "$dir"/perfflow.array.*.pfw --expect-events 10 --expect-names consume
}

# 1. CMake package.
cmake -S "$src" -B "$work/cmake" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$stage" >"$work/cmake.log" 2>&1 \
  || { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
run_and_check "$work/cmake" "$work/cmake/consumer"

# 2. pkg-config (its prefix is the configured one, so point it at the stage).
if command -v pkg-config >/dev/null; then
  mkdir -p "$work/pc"
  sed "s|^prefix=.*|prefix=$stage|" "$stage"/lib*/pkgconfig/perfflow.pc >"$work/pc/perfflow.pc"
  # shellcheck disable=SC2046
  "$cxx" -O2 "$src/main.cpp" $(PKG_CONFIG_PATH=$work/pc pkg-config --cflags --libs perfflow) -o "$work/pc/consumer"
  run_and_check "$work/pc" "$work/pc/consumer"
else
  echo "pkg-config not installed: pkg-config check skipped" >&2
fi
echo "packaging ok"
