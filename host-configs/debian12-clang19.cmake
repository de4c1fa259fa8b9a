# Debian 12 (bookworm) with clang 19 from Debian's own packages:
#   apt-get install clang-19 llvm-19-dev llvm-19-tools cmake
#   cmake -C host-configs/debian12-clang19.cmake -B build
set(CMAKE_C_COMPILER "/usr/bin/clang-19" CACHE FILEPATH "")
set(CMAKE_CXX_COMPILER "/usr/bin/clang++-19" CACHE FILEPATH "")
set(PERFFLOW_LLVM_CONFIG "/usr/lib/llvm-19/bin/llvm-config" CACHE FILEPATH "")
set(CMAKE_BUILD_TYPE "RelWithDebInfo" CACHE STRING "")
