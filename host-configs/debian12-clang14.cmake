# Debian 12 with its default clang 14:
#   apt-get install clang-14 llvm-14-dev llvm-14-tools cmake
#   cmake -C host-configs/debian12-clang14.cmake -B build
# LLVM 14 still uses typed pointers; the weaver is built with the cargo
# feature llvm14, picked from the LLVM version.
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/perfflowHostConfig.cmake")
perfflow_host_config(/usr/bin/clang-14 /usr/bin/clang++-14 /usr/lib/llvm-14/bin/llvm-config
  "Install them: apt-get install clang-14 llvm-14-dev llvm-14-tools")
