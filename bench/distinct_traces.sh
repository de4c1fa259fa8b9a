# Sourced by the db and export benchmarks (needs the release
# write_big_trace example built):
#   distinct_traces DIR PROCESSES MIB
# writes one trace of MIB MiB with trace/examples/write_big_trace.rs and
# copies it into DIR as PROCESSES processes on as many hosts, each copy made
# distinct by trailing blank lines, so that `db` skips none as already
# imported.
distinct_traces() {
    local dir=$1 processes=$2 mib=$3 i file
    mkdir -p "$dir"
    target/release/examples/write_big_trace "$dir/.one.pfw" "$mib" >/dev/null
    for i in $(seq 1 "$processes"); do
        file="$dir/perfflow.array.node$i.4242.pfw"
        cp "$dir/.one.pfw" "$file"
        printf '%*s' "$i" '' | tr ' ' '\n' >>"$file"
    done
    rm "$dir/.one.pfw"
}
