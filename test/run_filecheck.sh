#!/usr/bin/env bash
# IR test: runs the pass with opt and checks the output with FileCheck, and
# the pass's stderr against the file's STDERR lines when it has any.
#   run_filecheck.sh OPT PLUGIN FILECHECK FILE.ll PASSES [FileCheck options]
# OPT_FLAGS (environment) goes to opt first, e.g. -opaque-pointers for
# LLVM 14 reading opaque-pointer IR.
# opt reads the module from stdin, so its ModuleID and source_filename are
# `<stdin>` and never the checkout path, which a CHECK-NOT could match.
set -euo pipefail
opt=$1 plugin=$2 filecheck=$3 file=$4 passes=$5
shift 5
stderr=$(mktemp)
trap 'rm -f "$stderr"' EXIT
# shellcheck disable=SC2086
"$opt" ${OPT_FLAGS:-} -load-pass-plugin="$plugin" -passes="$passes" -S -o - <"$file" 2>"$stderr" \
  | "$filecheck" "$file" "$@"
if grep -q '^; STDERR' "$file"; then
  "$filecheck" --check-prefix=STDERR "$file" <"$stderr"
else
  cat "$stderr" >&2
fi
