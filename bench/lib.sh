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
