# bench/lib.sh - helpers the bench scripts share; sourced, not run.
# The sourcing script defines die().

# median V... -> the median of the numbers given as arguments.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
        END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# field KEY LINE -> the value of KEY=value in LINE (a line of key=value words).
field() {
    local kv
    for kv in $2; do
        [[ $kv == "$1="* ]] && { echo "${kv#*=}"; return; }
    done
    die "no $1 in: $2"
}

# build_against_runtime ROOT SOURCE OUT -> builds the runtime (release) in
# the checkout at ROOT and the C program SOURCE against its static library,
# as OUT.
build_against_runtime() {
    local root=$1 source=$2 out=$3 target lib
    (cd "$root" && cargo build --release --quiet -p perfflow-runtime) || die "building the runtime failed"
    target=$(cd "$root" && cargo metadata --format-version 1 --no-deps | sed 's/.*"target_directory":"\([^"]*\)".*/\1/')
    lib=$target/release/libperfflow_runtime.a
    [[ -f $lib ]] || die "$lib missing after the build"
    cc -O2 -I"$root/runtime/include" "$source" "$lib" -lpthread -ldl -lm -o "$out" \
        || die "building $source failed"
}
