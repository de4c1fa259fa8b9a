# An HPC site where LLVM comes from an environment module, e.g.
#   module load llvm/19.1.7        (or: spack load llvm@19)
#   cmake -C host-configs/hpc-module-llvm.cmake -B build -DCMAKE_INSTALL_PREFIX=$HOME/sw/perfflow
#
# Module files usually put clang and llvm-config on PATH and set a root
# variable; the names below cover the common ones (LLVM_ROOT, LLVM_HOME,
# LLVM_DIR's parent). The clang that compiles user code later must be this
# same module's clang, or the plugin will not load.
if(DEFINED ENV{LLVM_ROOT})
  set(_llvm_root "$ENV{LLVM_ROOT}")
elseif(DEFINED ENV{LLVM_HOME})
  set(_llvm_root "$ENV{LLVM_HOME}")
else()
  find_program(_llvm_config_on_path llvm-config)
  if(_llvm_config_on_path)
    get_filename_component(_llvm_root "${_llvm_config_on_path}" DIRECTORY)
    get_filename_component(_llvm_root "${_llvm_root}" DIRECTORY)
  endif()
endif()
if(NOT _llvm_root)
  message(FATAL_ERROR "hpc-module-llvm.cmake: load your site's LLVM module first (no LLVM_ROOT, LLVM_HOME or llvm-config on PATH).")
endif()
set(CMAKE_C_COMPILER "${_llvm_root}/bin/clang" CACHE FILEPATH "")
set(CMAKE_CXX_COMPILER "${_llvm_root}/bin/clang++" CACHE FILEPATH "")
set(PERFFLOW_LLVM_CONFIG "${_llvm_root}/bin/llvm-config" CACHE FILEPATH "")
set(CMAKE_BUILD_TYPE "RelWithDebInfo" CACHE STRING "")
# Clusters often have a site-wide cargo home; point at a toolchain if cargo is
# not on PATH:
# set(PERFFLOW_CARGO "/opt/rust/bin/cargo" CACHE FILEPATH "")
