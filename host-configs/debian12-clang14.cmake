# Debian 12 with its default clang 14 (apt-get install clang-14 llvm-14-dev
# llvm-14-tools). LLVM 14 still uses typed pointers; the weaver is built with
# the cargo feature llvm14, picked from the LLVM version.
set(CMAKE_C_COMPILER "/usr/bin/clang-14" CACHE FILEPATH "")
set(CMAKE_CXX_COMPILER "/usr/bin/clang++-14" CACHE FILEPATH "")
set(PERFFLOW_LLVM_CONFIG "/usr/lib/llvm-14/bin/llvm-config" CACHE FILEPATH "")
set(CMAKE_BUILD_TYPE "RelWithDebInfo" CACHE STRING "")
