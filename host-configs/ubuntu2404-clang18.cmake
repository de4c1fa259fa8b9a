# Ubuntu 24.04 (noble) with its default clang 18:
#   apt-get install clang-18 llvm-18-dev llvm-18-tools cmake
#   cmake -C host-configs/ubuntu2404-clang18.cmake -B build
# The weaver is then built with the cargo feature llvm18 (CMake picks it from
# the LLVM version).
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/perfflowHostConfig.cmake")
perfflow_host_config(/usr/bin/clang-18 /usr/bin/clang++-18 /usr/lib/llvm-18/bin/llvm-config
  "Install them: apt-get install clang-18 llvm-18-dev llvm-18-tools (Ubuntu 24.04; Debian 12 has no LLVM 18)")
