#!/usr/bin/env bash
# IR test: runs the pass with opt and checks the output with FileCheck.
#   run_filecheck.sh OPT PLUGIN FILECHECK FILE.ll PASSES [FileCheck options]
# opt reads the module from stdin, so its ModuleID and source_filename are
# `<stdin>` and never the checkout path, which a CHECK-NOT could match.
set -euo pipefail
opt=$1 plugin=$2 filecheck=$3 file=$4 passes=$5
shift 5
"$opt" -load-pass-plugin="$plugin" -passes="$passes" -S -o - <"$file" | "$filecheck" "$file" "$@"
