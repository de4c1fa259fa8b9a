# Debian 12 with its clang 16 packages:
#   apt-get install clang-16 llvm-16-dev llvm-16-tools cmake
#   cmake -C host-configs/debian12-clang16.cmake -B build
# The weaver is built with the cargo feature llvm16, picked from the LLVM
# version.
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/perfflowHostConfig.cmake")
perfflow_host_config(/usr/bin/clang-16 /usr/bin/clang++-16 /usr/lib/llvm-16/bin/llvm-config
  "Install them: apt-get install clang-16 llvm-16-dev llvm-16-tools")
