# Writes the manual pages (DIR/man1) and the bash, zsh and fish completion scripts of
# one command-line tool into DIR by running the tool itself, so that they
# always match its --help:
#   cmake -DTOOL=path/to/perfflow-trace -DNAME=perfflow-trace -DDIR=out -P cli-pages.cmake
foreach(var TOOL NAME DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "cli-pages.cmake needs -D${var}=...")
  endif()
endforeach()
file(MAKE_DIRECTORY "${DIR}")

function(_perfflow_page output)
  execute_process(COMMAND "${TOOL}" ${ARGN}
    OUTPUT_FILE "${DIR}/${output}.partial"
    RESULT_VARIABLE status
    ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "`${TOOL} ${ARGN}` failed (${status}): ${error}")
  endif()
  file(RENAME "${DIR}/${output}.partial" "${DIR}/${output}")
endfunction()

execute_process(COMMAND "${TOOL}" man "${DIR}/man1" OUTPUT_QUIET RESULT_VARIABLE status
  ERROR_VARIABLE error)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "`${TOOL} man` failed (${status}): ${error}")
endif()
_perfflow_page("${NAME}" completions bash)
_perfflow_page("_${NAME}" completions zsh)
_perfflow_page("${NAME}.fish" completions fish)
