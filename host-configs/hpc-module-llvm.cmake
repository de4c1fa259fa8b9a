# An HPC site where LLVM comes from an environment module, e.g.
#   module load llvm/19.1.7        (or: spack load llvm@19)
#   cmake -C host-configs/hpc-module-llvm.cmake -B build -DCMAKE_INSTALL_PREFIX=$HOME/sw/perfflow
#
# llvm-config is taken from the module's root variable (LLVM_ROOT or
# LLVM_HOME), else from PATH; clang and clang++ from the directory that
# llvm-config itself reports (`llvm-config --bindir`), which is where the
# module's clang lives even when PATH only holds wrappers or versioned
# names (Debian: /usr/lib/llvm-19/bin). The clang that compiles user code
# later must be this same module's clang, or the plugin will not load.
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/perfflowHostConfig.cmake")
if(DEFINED ENV{LLVM_ROOT})
  set(_llvm_config "$ENV{LLVM_ROOT}/bin/llvm-config")
elseif(DEFINED ENV{LLVM_HOME})
  set(_llvm_config "$ENV{LLVM_HOME}/bin/llvm-config")
else()
  find_program(_llvm_config NAMES llvm-config NO_CACHE)
endif()
if(NOT _llvm_config OR NOT EXISTS "${_llvm_config}")
  message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: no LLVM found: load your site's LLVM module first "
    "(no llvm-config at \$LLVM_ROOT/bin or \$LLVM_HOME/bin, and none on PATH).")
endif()
execute_process(COMMAND "${_llvm_config}" --bindir OUTPUT_VARIABLE _llvm_bindir
  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR NOT _llvm_bindir)
  message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: ${_llvm_config} --bindir failed: not a usable llvm-config.")
endif()
perfflow_host_config("${_llvm_bindir}/clang" "${_llvm_bindir}/clang++" "${_llvm_config}"
  "${_llvm_config} reports ${_llvm_bindir} as LLVM's bin directory; load the module that provides \
clang for this LLVM (Debian: apt-get install clang-<major> for llvm-config-<major>).")
# Clusters often have a site-wide cargo home; point at a toolchain if cargo is
# not on PATH:
# set(PERFFLOW_CARGO "/opt/rust/bin/cargo" CACHE FILEPATH "")
