#!/usr/bin/env bash
# Configuration stops early, with a clear message, when no LLVM is found or
# when LLVM's major version differs from clang's.
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
echo "configure errors ok"
