#!/usr/bin/env bash
# Installs this build into a staging prefix, then builds a user project
# against it twice, through find_package(perfflow) and through pkg-config,
# and checks the traces both leave. With GXX (another compiler than clang):
# perfflow::perfflow fails to configure with a message naming the compiler
# and the alternatives, which both build and trace: perfflow::runtime (the
# manual API) and perfflow::instrument (-finstrument-functions and a filter
# file), and so does perfflow-runtime.pc, which has no plugin flags.
#   packaging.sh BUILD_DIR CXX WORKDIR CONSUMER_SOURCE_DIR [GXX]
set -eu
build=$1 cxx=$2 work=$3 src=$4 gxx=${5:-}
rm -rf "$work" && mkdir -p "$work"
stage=$work/stage
cmake --install "$build" --prefix "$stage" >/dev/null
trace=$stage/bin/perfflow-trace

# The manual pages and completions are installed where man and the shells look.
grep -q '^\.TH perfflow-trace 1' "$stage/share/man/man1/perfflow-trace.1"
grep -q '^\.TH perfflow-trace-merge 1' "$stage/share/man/man1/perfflow-trace-merge.1"
grep -q 'complete .*perfflow-trace' "$stage/share/bash-completion/completions/perfflow-trace"
grep -q '#compdef perfflow-trace' "$stage/share/zsh/site-functions/_perfflow-trace"
grep -q 'complete -c perfflow-trace' "$stage/share/fish/vendor_completions.d/perfflow-trace.fish"
grep -q '^\.TH perfflow-monitor 1' "$stage/share/man/man1/perfflow-monitor.1"
grep -q '^\.TH perfflow-monitor-merge 1' "$stage/share/man/man1/perfflow-monitor-merge.1"
grep -q 'complete .*perfflow-monitor' "$stage/share/bash-completion/completions/perfflow-monitor"
grep -q '#compdef perfflow-monitor' "$stage/share/zsh/site-functions/_perfflow-monitor"
grep -q 'complete -c perfflow-monitor' "$stage/share/fish/vendor_completions.d/perfflow-monitor.fish"

# The installed tools name the LLVM of the plugin installed with them.
"$trace" --version | grep -q "weaver plugin for LLVM" || { "$trace" --version; echo "FAIL: no LLVM in --version"; exit 1; }

run_and_check() {
  local dir=$1 exe=$2
  (cd "$dir" && rm -f perfflow.*.pfw && "$exe" >/dev/null)
  "$trace" check "$dir"/perfflow.array.*.pfw --expect-events 10 --expect-names consume
}

# 1. CMake package.
cmake -S "$src" -B "$work/cmake" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$stage" >"$work/cmake.log" 2>&1 \
  || { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
run_and_check "$work/cmake" "$work/cmake/consumer"

# 2. pkg-config (its prefix is the configured one, so point it at the stage).
if command -v pkg-config >/dev/null; then
  mkdir -p "$work/pc"
  sed "s|^prefix=.*|prefix=$stage|" "$stage"/lib*/pkgconfig/perfflow.pc >"$work/pc/perfflow.pc"
  # shellcheck disable=SC2046
  "$cxx" -O2 "$src/main.cpp" $(PKG_CONFIG_PATH=$work/pc pkg-config --cflags --libs perfflow) -o "$work/pc/consumer"
  run_and_check "$work/pc" "$work/pc/consumer"
else
  echo "pkg-config not installed: pkg-config check skipped" >&2
fi
# 3. Another compiler.
if [ -n "$gxx" ]; then
  # 3a. perfflow::perfflow: configuring fails, naming the compiler and the alternatives.
  if cmake -S "$src" -B "$work/gcc-weave" -DCMAKE_CXX_COMPILER="$gxx" -DCMAKE_PREFIX_PATH="$stage" \
      >"$work/gcc-weave.log" 2>&1; then
    cat "$work/gcc-weave.log"; echo "FAIL: perfflow::perfflow configured with $gxx"; exit 1
  fi
  # CMake wraps messages: compare with the white space squeezed.
  message=$(tr -s ' \n' '  ' <"$work/gcc-weave.log")
  for word in "consumer link(s) perfflow::perfflow" "compiler is GNU" "perfflow::runtime" "perfflow::instrument"; do
    case $message in *"$word"*) ;; *) cat "$work/gcc-weave.log"; echo "FAIL: no '$word' in the message"; exit 1 ;; esac
  done
  # 3b. perfflow::runtime: the manual API.
  cmake -S "$src" -B "$work/gcc-runtime" -DCMAKE_CXX_COMPILER="$gxx" -DCMAKE_PREFIX_PATH="$stage" \
    -DCONSUMER_LINK=runtime >"$work/gcc-runtime.log" 2>&1 || { cat "$work/gcc-runtime.log"; exit 1; }
  cmake --build "$work/gcc-runtime" >>"$work/gcc-runtime.log" 2>&1 || { cat "$work/gcc-runtime.log"; exit 1; }
  run_and_check "$work/gcc-runtime" "$work/gcc-runtime/consumer"
  # 3c. perfflow::instrument: -finstrument-functions, the filter file picks consume.
  cmake -S "$src" -B "$work/gcc-instrument" -DCMAKE_CXX_COMPILER="$gxx" -DCMAKE_PREFIX_PATH="$stage" \
    -DCONSUMER_LINK=instrument >"$work/gcc-instrument.log" 2>&1 || { cat "$work/gcc-instrument.log"; exit 1; }
  cmake --build "$work/gcc-instrument" >>"$work/gcc-instrument.log" 2>&1 || { cat "$work/gcc-instrument.log"; exit 1; }
  printf 'include function consume\n' >"$work/consume.filter"
  PERFFLOW_WEAVE_FILTER=$work/consume.filter run_and_check "$work/gcc-instrument" "$work/gcc-instrument/consumer"
  # 3d. perfflow-runtime.pc: no plugin flags; the manual API.
  if command -v pkg-config >/dev/null; then
    sed "s|^prefix=.*|prefix=$stage|" "$stage"/lib*/pkgconfig/perfflow-runtime.pc >"$work/pc/perfflow-runtime.pc"
    flags=$(PKG_CONFIG_PATH=$work/pc pkg-config --cflags --libs perfflow-runtime)
    case $flags in *pass-plugin*) echo "FAIL: perfflow-runtime.pc has plugin flags: $flags"; exit 1 ;; esac
    mkdir -p "$work/gcc-pc"
    # shellcheck disable=SC2086
    "$gxx" -O2 "$src/manual.cpp" $flags -o "$work/gcc-pc/consumer"
    run_and_check "$work/gcc-pc" "$work/gcc-pc/consumer"
  fi
fi

# 4. Installed binaries and libraries carry no debug info; it is in .debug/.
if [ "${PERFFLOW_KEEP_DEBUG:-OFF}" != "ON" ]; then
  for f in "$stage"/lib*/libWeavePass.so "$stage"/lib*/libperfflow_runtime.so "$stage"/bin/perfflow-trace; do
    if readelf -SW "$f" | grep -qE '\.debug_(info|line)'; then echo "FAIL: $f has debug sections"; exit 1; fi
    name=$(basename "$f")
    [ -s "$(dirname "$f")/.debug/$name.debug" ] || { echo "FAIL: no .debug/$name.debug beside $f"; exit 1; }
  done
fi
echo "packaging ok"
