# Script mode (cmake -P), driven by the `install` test (tests/install.cmake):
#   -DBUILD_DIR=<build tree> -DWORK_DIR=<scratch dir> -DCUDA_BACKEND=ON|OFF
# Installs BUILD_DIR into WORK_DIR/prefix, checks the installed layout (cmake/install.cmake), runs
# the installed vmm-run on the installed reuse.yaml with the host backend from outside the source
# tree (exit 0, a report written), validates every installed scenario, and checks the format of
# `vmm-run --version` (runner/cli/version_text.h) and the installed completion scripts.
foreach(var BUILD_DIR WORK_DIR CUDA_BACKEND)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_run.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${prefix} exited ${rc}:\n${log}")
endif()

foreach(file bin/vmm-run
             share/vmm-run/schemas/scenario.schema.json
             share/vmm-run/schemas/report.schema.json
             share/vmm-run/schemas/diff-config.schema.json
             share/vmm-run/scenarios/reuse.yaml
             share/vmm-run/scenarios/graph_update.yaml
             share/doc/vmm-run/README.md
             share/doc/vmm-run/diffing.md
             share/doc/vmm-run/ci.md
             share/doc/vmm-run/examples/ci/vmm-run.yml
             share/bash-completion/completions/vmm-run
             share/zsh/vendor-completions/_vmm-run)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: ${prefix}/${file}")
  endif()
endforeach()

set(vmmrun ${prefix}/bin/vmm-run)
# From WORK_DIR, so nothing can come from the source or build tree by a relative path.
execute_process(COMMAND ${vmmrun} ${prefix}/share/vmm-run/scenarios/reuse.yaml --backend host
                        --quiet --report-dir ${WORK_DIR}/reports
                WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed vmm-run on the installed reuse.yaml exited ${rc}:\n${log}")
endif()
if(NOT EXISTS ${WORK_DIR}/reports/reuse.host.json)
  message(FATAL_ERROR "installed vmm-run wrote no ${WORK_DIR}/reports/reuse.host.json:\n${log}")
endif()

file(GLOB scenarios ${prefix}/share/vmm-run/scenarios/*.yaml)
execute_process(COMMAND ${vmmrun} validate --quiet ${scenarios} WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed vmm-run validate of the installed scenarios exited ${rc}:\n${log}")
endif()

execute_process(COMMAND ${vmmrun} --version RESULT_VARIABLE rc OUTPUT_VARIABLE version
                ERROR_VARIABLE version)
set(first "vmm-run [0-9]+\\.[0-9]+\\.[0-9]+ \\(([0-9a-f]+(-dirty)?|unknown)\\)\n")
if(CUDA_BACKEND)
  string(CONCAT rest "CUDA backend: built\nCUDA runtime: [0-9]+\\.[0-9]+[0-9.]* \\(linked statically; "
                     "the driver is loaded at run time\\)\nGPU code: [^\n]*(machine code|PTX for [^\n]*)\n")
else()
  set(rest "CUDA backend: not built\n")
endif()
string(CONCAT pattern "^" "${first}" "${rest}" "$")
if(NOT rc EQUAL 0 OR NOT version MATCHES "${pattern}")
  message(FATAL_ERROR "vmm-run --version exited ${rc} and printed:\n${version}\n"
                      "expected (CUDA_BACKEND=${CUDA_BACKEND}) to match:\n${pattern}")
endif()

foreach(shell bash zsh)
  execute_process(COMMAND ${vmmrun} completion ${shell} RESULT_VARIABLE rc OUTPUT_VARIABLE script)
  if(shell STREQUAL "bash")
    file(READ ${prefix}/share/bash-completion/completions/vmm-run installed)
  else()
    file(READ ${prefix}/share/zsh/vendor-completions/_vmm-run installed)
  endif()
  if(NOT rc EQUAL 0 OR NOT script STREQUAL installed)
    message(FATAL_ERROR "the installed ${shell} completion is not `vmm-run completion ${shell}` "
                        "(exit ${rc})")
  endif()
endforeach()
message(STATUS "installed into ${prefix}; ran reuse.yaml on the host backend; --version:\n${version}")
