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
# reports/baselines/h200/OLD_HASH_SCHEME names the H200 reports not recorded again yet (one name a
# line, why in its comments); any other scenario whose two sides differ in scheme is an error, and
# so is a listed one whose sides agree by now (take it off the list).
set(old_scheme "")
if(EXISTS ${gpu}/OLD_HASH_SCHEME)
  file(STRINGS ${gpu}/OLD_HASH_SCHEME old_scheme REGEX "^[^#]")
endif()
string(REGEX MATCHALL "info +[^ \n]+ +[^ \n]+ +data_hash_scheme" scheme_rows "${out}")
set(differing "")
foreach(row IN LISTS scheme_rows)
  string(REGEX REPLACE "info +([^ ]+) .*" "\\1" name "${row}")
  list(APPEND differing ${name})
  if(NOT name IN_LIST old_scheme)
    message(FATAL_ERROR "'${name}': the host baseline and the H200 report name different data "
                        "hash schemes: record both again with this vmm-run")
  endif()
endforeach()
foreach(name IN LISTS old_scheme)
  if(NOT name IN_LIST differing)
    message(FATAL_ERROR "'${name}' is in ${gpu}/OLD_HASH_SCHEME but its reports agree on the "
                        "scheme: take it off the list")
  endif()
endforeach()
# A scenario the host ran and the H200 report skipped (a report made on a machine that lacked
# what it requires) compares nothing: record it where it runs, or list it in PENDING.
string(REGEX MATCHALL "skipped +[^ \n]+ +- +result +(pass|fail) +skipped" gpu_skipped "${out}")
if(gpu_skipped)
  message(FATAL_ERROR "H200 reports that skipped what the host ran: ${gpu_skipped}")
endif()
