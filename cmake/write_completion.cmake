# Script mode: writes `VMMRUN completion SHELL` to OUTPUT (cmake/install.cmake runs it at build time).
#   cmake -DVMMRUN=<vmm-run> -DSHELL=bash|zsh -DOUTPUT=<file> -P write_completion.cmake
execute_process(COMMAND ${VMMRUN} completion ${SHELL} OUTPUT_FILE ${OUTPUT} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUTPUT})
  message(FATAL_ERROR "${VMMRUN} completion ${SHELL} exited ${rc}: ${err}")
endif()
