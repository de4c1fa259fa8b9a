#!/usr/bin/env bash
# Configuration stops early, with a clear message, when no LLVM is found or
# when LLVM's major version differs from clang's; a host-config whose
# compiler or LLVM is missing names what is missing. hpc-module-llvm.cmake
# finds clang where llvm-config says LLVM's binaries are (with Debian's
# llvm-config-19 as llvm-config on PATH: /usr/lib/llvm-19/bin/clang).
#   configure_errors.sh SOURCE_DIR CC CXX WORKDIR
set -u
src=$1 cc=$2 cxx=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; cat "$work/out.txt" >&2; exit 1; }

# An llvm-config that reports a different major version than clang's.
cat >"$work/llvm-config" <<'SH'
#!/bin/sh
case "$1" in
  --version) echo 7.1.0 ;;
  --prefix) echo /opt/llvm-7 ;;
  --bindir) echo /opt/llvm-7/bin ;;
esac
SH
chmod +x "$work/llvm-config"

configure() {
  cmake -S "$src" -B "$work/build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "$@" >"$work/out.txt" 2>&1
}

configure -DPERFFLOW_LLVM_CONFIG="$work/llvm-config" && fail "configured with mismatched LLVM"
grep -q "clang and LLVM versions do not match" "$work/out.txt" || fail "no message about the version mismatch"

rm -rf "$work/build"
configure -DPERFFLOW_LLVM_CONFIG="$work/no-such-llvm-config" && fail "configured without LLVM"
grep -q "No LLVM found" "$work/out.txt" || fail "no message about the missing LLVM"
# Host-configs. A project that only prints what the host-config set.
mkdir -p "$work/hc/project" "$work/hc/bin"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(hc NONE)\nmessage(STATUS "CC=${CMAKE_C_COMPILER}")\n' \
  >"$work/hc/project/CMakeLists.txt"
host_config() {
  rm -rf "$work/hc/build"
  env -u LLVM_ROOT -u LLVM_HOME "$@" cmake -C "$src/host-configs/hpc-module-llvm.cmake" \
    -S "$work/hc/project" -B "$work/hc/build" >"$work/out.txt" 2>&1
}
host_config LLVM_ROOT=/nonexistent-llvm && fail "hpc-module-llvm.cmake accepted a missing LLVM"
grep -q "no LLVM found" "$work/out.txt" || fail "no message about the missing LLVM module"

cat >"$work/hc/bin/llvm-config" <<'SH'
#!/bin/sh
case "$1" in --bindir) echo /nonexistent-llvm/bin ;; --version) echo 19.1.7 ;; esac
SH
chmod +x "$work/hc/bin/llvm-config"
host_config PATH="$work/hc/bin:$PATH" && fail "hpc-module-llvm.cmake accepted an LLVM without clang"
grep -q "not found on this" "$work/out.txt" && grep -q "/nonexistent-llvm/bin/clang" "$work/out.txt" \
  || fail "no message naming the missing clang"

for llvm_config in /usr/lib/llvm-*/bin/llvm-config; do
  major=$(basename "$(dirname "$(dirname "$llvm_config")")")
  [ -x "/usr/bin/llvm-config-${major#llvm-}" ] && [ -x "$(dirname "$llvm_config")/clang" ] || continue
  ln -sf "/usr/bin/llvm-config-${major#llvm-}" "$work/hc/bin/llvm-config"
  host_config PATH="$work/hc/bin:$PATH" || fail "hpc-module-llvm.cmake rejected Debian's llvm-config"
  grep -q "CC=$(dirname "$llvm_config")/clang\$" "$work/out.txt" || fail "clang not taken from llvm-config --bindir"
  break
done

for config in "$src"/host-configs/*.cmake; do
  grep -q perfflow_host_config "$config" || fail "$config does not check its compiler and LLVM"
done
echo "configure errors ok"
