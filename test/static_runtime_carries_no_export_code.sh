#!/usr/bin/env bash
# The static runtime a traced program links carries the metric samplers
# but none of the monitor's exports or reports: no symbol of Arrow,
# Parquet, ORC, HDF5, the SVG/PDF renderers or the command line.
#   static_runtime_carries_no_export_code.sh NM LIBRARY
set -u
nm=$1 library=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
symbols=$("$nm" --defined-only "$library" 2>/dev/null) || fail "$nm cannot read $library"
# Crate names as both Rust manglings write them (length, then name).
grep -q '16perfflow_runtime' <<<"$symbols" || fail "$library has no perfflow_runtime symbol"
grep -q '16perfflow_monitor' <<<"$symbols" || fail "$library has no sampler (perfflow_monitor) symbol"
found=$(grep -E -o '(7parquet|11arrow_array|9arrow_ipc|8orc_rust|10hdf5_metno|5resvg|4usvg|7svg2pdf|4clap)[A-Z0-9_]' \
  <<<"$symbols" | sed 's/.$//' | sort -u | tr '\n' ' ')
[ -z "$found" ] || fail "$library carries code of: $found"
echo "static runtime ok"
