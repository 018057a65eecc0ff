# Script mode (cmake -P), driven by the `h200_regressions` test (tests/CMakeLists.txt):
#   -DVMMRUN=<vmm-run> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch dir>
# Every tests/h200_regressions/<name>/ holds a scenario that `vmm-run crosscheck` shrunk from a
# disagreement between the H200 and the host twin, and the H200's report of it (h200.json, from that
# run, reports/h200/session9). The twin now answers as the GPU did: each scenario runs on the host
# backend and its report is diffed against the H200's on every stable field, as the cross-machine
# config compares them.
cmake_minimum_required(VERSION 3.16)
foreach(var VMMRUN SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "h200_regressions_run.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(GLOB cases LIST_DIRECTORIES true ${SOURCE_DIR}/tests/h200_regressions/*)
set(failed "")
foreach(dir IN LISTS cases)
  if(NOT IS_DIRECTORY ${dir})
    continue()
  endif()
  get_filename_component(name ${dir} NAME)
  execute_process(COMMAND ${VMMRUN} run ${dir}/scenario.yaml --backend host --quiet
                          --report ${WORK_DIR}/${name}.json
                  RESULT_VARIABLE run_rc OUTPUT_QUIET ERROR_VARIABLE run_err)
  execute_process(COMMAND ${VMMRUN} diff ${dir}/h200.json ${WORK_DIR}/${name}.json
                          --config ${SOURCE_DIR}/reports/baselines/cross-machine.yaml
                          --fail-on=regression,missing,added,ambiguous
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  # An improvement row is a difference too (the twin passes what the GPU failed).
  # Hashes of two schemes are not compared (kernels/datagen.h): record h200.json again instead.
  if(NOT rc EQUAL 0 OR NOT out MATCHES " 0 improvements," OR out MATCHES "data_hash_scheme")
    message("${name}: the host twin and the H200 differ (run exit ${run_rc}):\n${run_err}${out}${err}")
    list(APPEND failed ${name})
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "the twin no longer answers as the H200 did for: ${failed}")
endif()
