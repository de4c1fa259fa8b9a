# perfflow_weave_filter(<target> <filter-file>)
#
# Weaves the functions that <filter-file> selects (see the README, "Tracing
# without editing sources") into <target>'s C and C++ sources: the compiler
# runs with PERFFLOW_WEAVE_FILTER=<filter-file> in its environment, through
# the target's compiler launcher (an existing launcher such as ccache is
# kept, after it), and the sources are recompiled when the file changes. The
# target property PERFFLOW_WEAVE_FILTER records the file. The target must
# also be woven (perfflow::perfflow).
function(perfflow_weave_filter target filter)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "perfflow_weave_filter: no target named '${target}'")
  endif()
  get_filename_component(filter "${filter}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${filter}")
    message(FATAL_ERROR "perfflow_weave_filter(${target}): the filter file ${filter} does not exist")
  endif()
  set_property(TARGET ${target} PROPERTY PERFFLOW_WEAVE_FILTER "${filter}")
  foreach(_lang C CXX)
    get_target_property(_launcher ${target} ${_lang}_COMPILER_LAUNCHER)
    if(NOT _launcher)
      set(_launcher "")
    endif()
    set_property(TARGET ${target} PROPERTY ${_lang}_COMPILER_LAUNCHER
      "${CMAKE_COMMAND}" -E env "PERFFLOW_WEAVE_FILTER=${filter}" ${_launcher})
  endforeach()
  get_target_property(_sources ${target} SOURCES)
  set_property(SOURCE ${_sources} TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS "${filter}")
endfunction()
