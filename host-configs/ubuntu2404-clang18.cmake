# Ubuntu 24.04 (noble) with its default clang 18:
#   apt-get install clang-18 llvm-18-dev llvm-18-tools cmake
#   cmake -C host-configs/ubuntu2404-clang18.cmake -B build
# The weaver is then built with the cargo feature llvm18 (CMake picks it from
# the LLVM version).
set(CMAKE_C_COMPILER "/usr/bin/clang-18" CACHE FILEPATH "")
set(CMAKE_CXX_COMPILER "/usr/bin/clang++-18" CACHE FILEPATH "")
set(PERFFLOW_LLVM_CONFIG "/usr/lib/llvm-18/bin/llvm-config" CACHE FILEPATH "")
set(CMAKE_BUILD_TYPE "RelWithDebInfo" CACHE STRING "")
