#!/usr/bin/env bash
# IR test: runs the pass with opt and checks the output with FileCheck.
#   run_filecheck.sh OPT PLUGIN FILECHECK FILE.ll PASSES [FileCheck options]
set -euo pipefail
opt=$1 plugin=$2 filecheck=$3 file=$4 passes=$5
shift 5
"$opt" -load-pass-plugin="$plugin" -passes="$passes" "$file" -S -o - | "$filecheck" "$file" "$@"
