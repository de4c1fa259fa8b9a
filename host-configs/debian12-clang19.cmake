# Debian 12 (bookworm) with clang 19 from Debian's own packages:
#   apt-get install clang-19 llvm-19-dev llvm-19-tools cmake
#   cmake -C host-configs/debian12-clang19.cmake -B build
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/perfflowHostConfig.cmake")
perfflow_host_config(/usr/bin/clang-19 /usr/bin/clang++-19 /usr/lib/llvm-19/bin/llvm-config
  "Install them: apt-get install clang-19 llvm-19-dev llvm-19-tools")
