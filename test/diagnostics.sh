#!/usr/bin/env bash
# A malformed annotation gives a file:line warning and leaves the function
# unwoven; with PERFFLOW_WEAVE_STRICT=1 it fails the compilation.
#   diagnostics.sh CC PLUGIN RUNTIME_DIR SOURCE WORKDIR
set -u
cc=$1 plugin=$2 libdir=$3 source=$4 workdir=$5
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
fail() { echo "FAIL: $*" >&2; cat stderr.txt >&2 2>/dev/null; exit 1; }

name=$(basename "$source")
"$cc" -O1 -fpass-plugin="$plugin" "$source" -L"$libdir" -Wl,-rpath,"$libdir" -lperfflow_runtime -o prog 2>stderr.txt \
  || fail "compilation failed without strict mode"
grep -E "^[^ ]*$name:5: warning: perfflow: .*arround.* in '@critical_path\(pointcut='arround'\)' on function typo$" stderr.txt >/dev/null \
  || fail "no file:line warning for the malformed annotation"
if grep -q "on function fine" stderr.txt; then fail "the well-formed annotation was reported"; fi

PERFFLOW_WEAVE_STRICT=1 "$cc" -O1 -fpass-plugin="$plugin" "$source" -L"$libdir" -lperfflow_runtime -o strict 2>stderr.txt \
  && fail "strict mode did not fail the compilation"
grep -E "$name:5: error: perfflow: .* on function typo$" stderr.txt >/dev/null || fail "no file:line error in strict mode"
[ ! -e strict ] || fail "strict mode produced a program"

PERFFLOW_WEAVE_VERBOSE=1 "$cc" -O1 -fpass-plugin="$plugin" "$source" -c -o verbose.o 2>stderr.txt || fail "verbose compile failed"
grep -q "perfflow: wove fine (around)" stderr.txt || fail "PERFFLOW_WEAVE_VERBOSE=1 did not list the woven function"
echo "diagnostics ok"
