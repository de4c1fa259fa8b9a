# Debian 12 with its clang 15 packages:
#   apt-get install clang-15 llvm-15-dev llvm-15-tools cmake
#   cmake -C host-configs/debian12-clang15.cmake -B build
# The weaver is built with the cargo feature llvm15, picked from the LLVM
# version.
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/perfflowHostConfig.cmake")
perfflow_host_config(/usr/bin/clang-15 /usr/bin/clang++-15 /usr/lib/llvm-15/bin/llvm-config
  "Install them: apt-get install clang-15 llvm-15-dev llvm-15-tools")
