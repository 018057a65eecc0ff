# Script mode (cmake -P), driven by the `cross_backend_agreement` test (tests/CMakeLists.txt):
#   -DVMMRUN=<vmm-run> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch dir>
# Diffs the host baselines against the H200 reports on every stable field. A scenario whose GPU
# report is still to be made is listed, one name a line, in reports/baselines/h200/PENDING: it is
# left out (and named in the output); every other host baseline must have its H200 report. A
# PENDING name that has a report by now is an error (take it off the list).
cmake_minimum_required(VERSION 3.16)  # IN_LIST
foreach(var VMMRUN SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "cross_backend_run.cmake: -D${var}=... is required")
  endif()
endforeach()

set(host ${SOURCE_DIR}/reports/baselines/host)
set(gpu ${SOURCE_DIR}/reports/baselines/h200)
set(pending "")
if(EXISTS ${gpu}/PENDING)
  file(STRINGS ${gpu}/PENDING pending REGEX "^[^#]")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(GLOB reports ${host}/*.json)
foreach(report IN LISTS reports)
  get_filename_component(name ${report} NAME_WE)
  if(name IN_LIST pending)
    # A sweep's reports are <name>.<point>.<backend>.json, one per point.
    file(GLOB made ${gpu}/${name}.json ${gpu}/${name}.*.json)
    if(made)
      message(FATAL_ERROR "${made} exists: take '${name}' off ${gpu}/PENDING")
    endif()
    message("no H200 report yet for '${name}' (listed in reports/baselines/h200/PENDING)")
  else()
    file(COPY ${report} DESTINATION ${WORK_DIR})
  endif()
endforeach()

execute_process(COMMAND ${VMMRUN} diff ${WORK_DIR} ${gpu}
                        --config ${SOURCE_DIR}/reports/baselines/cross-machine.yaml
                        --fail-on=regression,missing,ambiguous
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vmm-run diff exited ${rc}: the host baselines and the H200 reports differ")
endif()
# The two sides' data hashes must be compared: baselines of different hash schemes (one side
# recorded again after kernels/datagen.h changed, the other not) would pass with the hashes unseen.
if(out MATCHES "data_hash_scheme")
  message(FATAL_ERROR "the host baselines and the H200 reports name different data hash schemes: "
                      "record both again with this vmm-run")
endif()
