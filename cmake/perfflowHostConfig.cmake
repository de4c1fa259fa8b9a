# Shared by the host-configs: perfflow_host_config(CC CXX LLVM_CONFIG HOW)
# sets the compilers and llvm-config, or stops with a message that names the
# host-config, every missing file, and HOW to get them. A macro, so the
# message names the host-config that calls it.
macro(perfflow_host_config _cc _cxx _llvm_config _how)
  set(_perfflow_missing "")
  foreach(_perfflow_tool "${_cc}" "${_cxx}" "${_llvm_config}")
    if(NOT EXISTS "${_perfflow_tool}")
      string(APPEND _perfflow_missing "\n  ${_perfflow_tool}")
    endif()
  endforeach()
  if(_perfflow_missing)
    message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: not found on this machine:${_perfflow_missing}\n${_how}")
  endif()
  set(CMAKE_C_COMPILER "${_cc}" CACHE FILEPATH "")
  set(CMAKE_CXX_COMPILER "${_cxx}" CACHE FILEPATH "")
  set(PERFFLOW_LLVM_CONFIG "${_llvm_config}" CACHE FILEPATH "")
  set(CMAKE_BUILD_TYPE "RelWithDebInfo" CACHE STRING "")
endmacro()
