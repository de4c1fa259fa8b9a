#!/usr/bin/env bash
# The plugin's diagnostics for filter files: a rule that matches no function
# of the file being compiled is a warning naming the rule; a filter file
# with a bad line, or one that cannot be read, fails the compilation naming
# the file and the line.
#   filter_diagnostics.sh CXX PLUGIN SOURCE WORKDIR
set -u
cxx=$1 plugin=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*" >&2; cat "$work/stderr.txt" >&2; exit 1; }
compile() {
  PERFFLOW_WEAVE_FILTER=$1 "$cxx" -O2 -c -fpass-plugin="$plugin" "$src" -o "$work/out.o" 2>"$work/stderr.txt"
}

printf '# comment\ninclude function nothing_is_called_this\ninclude function checksum\n' >"$work/unmatched.filter"
compile "$work/unmatched.filter" || fail "a rule that matches nothing should not fail the compilation"
grep -q "warning: perfflow: rules of $work/unmatched.filter that match no function of this file: line 2 (function 'nothing_is_called_this')" \
  "$work/stderr.txt" || fail "no warning naming the rule that matches nothing"
grep -q "checksum" "$work/stderr.txt" && fail "the rule that matched was reported"

# A rule for every name matches nothing only in a file that defines no
# function: nothing to warn about.
printf 'extern int data;\nint data = 3;\n' >"$work/no_functions.c"
printf 'include function *\n' >"$work/every.filter"
PERFFLOW_WEAVE_FILTER="$work/every.filter" "$cxx" -x c -O2 -c -fpass-plugin="$plugin" "$work/no_functions.c" \
  -o "$work/data.o" 2>"$work/stderr.txt" || fail "a file without functions should compile"
grep -q "warning" "$work/stderr.txt" && fail "a rule for every name warned in a file without functions"

printf 'include function checksum\ninclude function x @critical_path(flow=sideways)\n' >"$work/bad.filter"
compile "$work/bad.filter" && fail "a bad filter file should fail the compilation"
grep -q "$work/bad.filter:2: .*sideways" "$work/stderr.txt" || fail "no message naming the bad line"

compile "$work/missing.filter" && fail "a missing filter file should fail the compilation"
grep -q "cannot read filter file $work/missing.filter" "$work/stderr.txt" || fail "no message naming the missing file"
echo "filter diagnostics ok"
