#!/usr/bin/env bash
# A huge malformed annotation (2,000 unknown keys and 1,999 duplicate ones,
# 48 KB) gives one diagnostic of bounded length, not one per problem
# repeating the whole annotation.
#   huge_annotation_diagnostics.sh CC PLUGIN WORKDIR
set -u
cc=$1 plugin=$2 workdir=$3
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
fail() { echo "FAIL: $*" >&2; head -c 4000 stderr.txt >&2 2>/dev/null; exit 1; }

keys=$(for i in $(seq 1000 2999); do printf "k%d='v',scope='s%d'," "$i" "$i"; done)
printf '%s\n' \
  "__attribute__((annotate(\"@critical_path(${keys}pointcut='around')\")))" \
  'int work(int x) { return x + 1; }' >huge.c
[ "$(wc -c <huge.c)" -gt 40000 ] || fail "the generated annotation is too small"

"$cc" -O1 -fpass-plugin="$plugin" -c huge.c -o huge.o 2>stderr.txt || fail "compilation failed"
bytes=$(wc -c <stderr.txt)
[ "$bytes" -le 1024 ] || fail "stderr holds $bytes bytes, expected at most 1024"
[ "$(grep -c 'perfflow:' stderr.txt)" -eq 1 ] || fail "expected exactly one diagnostic"
unknown="unknown key 'k[0-9]+': expected one of [a-z, ]+"
grep -qE "^huge.c:2: warning: perfflow: 3999 problems: $unknown; $unknown; duplicate key 'scope': first given as scope='s1000' at byte [0-9]+ \(1999 times\); $unknown; and 1997 more in '@critical_path\(k1000='v',scope='s1000',.*…' on function work$" stderr.txt \
  || fail "the diagnostic does not count the problems and shorten the annotation"
echo "huge annotation diagnostics ok ($bytes bytes)"
