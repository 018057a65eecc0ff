# Script mode (cmake -P), driven by the `baseline_diff` test (tests/baseline_diff.cmake):
#   -DVMMRUN=<vmm-run> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch dir> [-DREFRESH=ON]
# Runs every scenario on the host backend into WORK_DIR, then diffs against the baselines.
# With -DREFRESH=ON it instead rewrites reports/baselines/host/<scenario file>.json from the run
# (refresh on purpose, then review `git diff` and commit with the reason).
foreach(var VMMRUN SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "baseline_diff_run.cmake: -D${var}=... is required")
  endif()
endforeach()

set(baselines ${SOURCE_DIR}/reports/baselines/host)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(GLOB scenarios ${SOURCE_DIR}/scenarios/*.yaml)
list(SORT scenarios)

foreach(scenario IN LISTS scenarios)
  get_filename_component(name ${scenario} NAME_WE)
  set(dir ${WORK_DIR})
  if(REFRESH)
    set(dir ${baselines})
  endif()
  # Run from the source dir with a relative scenario path, so reports name "scenarios/x.yaml".
  file(RELATIVE_PATH relative ${SOURCE_DIR} ${scenario})
  # A sweep writes one report per point (<name>.<point>.host.json, paired by `vmm-run diff` on
  # scenario name and point) and a CSV table, which is not a baseline. The scenario's `name:` is
  # its file name, so the reports are found by that prefix.
  file(STRINGS ${scenario} sweep REGEX "^sweep:")
  if(sweep)
    file(GLOB old ${dir}/${name}.*.host.json)
    if(old)
      file(REMOVE ${old})
    endif()
    set(where --report-dir ${dir})
  else()
    set(where --report ${dir}/${name}.json)
  endif()
  execute_process(COMMAND ${VMMRUN} run ${relative} --backend host --quiet ${where}
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  file(REMOVE ${dir}/${name}.sweep.host.csv ${dir}/${name}.sweep.host.md)
  # A failing check (1) or step (4) still writes a report, and the diff judges it against the
  # baseline (a baseline may record a known failure). No report at all is a failure here.
  file(GLOB written ${dir}/${name}.json ${dir}/${name}.*.host.json)
  if(NOT written)
    message(FATAL_ERROR "vmm-run run ${relative} exited ${rc} without a report:\n${log}")
  endif()
endforeach()

if(REFRESH)
  # Each run also writes a DOT file per captured graph beside its report; a baseline keeps the
  # structure in the JSON (graphs, structure_hash), so the DOT files are not kept.
  file(GLOB dots ${baselines}/*.dot)
  if(dots)
    file(REMOVE ${dots})
  endif()
  message(STATUS "rewrote the baselines in ${baselines}; review `git diff` and commit the reason")
  return()
endif()

execute_process(COMMAND ${VMMRUN} diff ${baselines} ${WORK_DIR}
                        --config ${SOURCE_DIR}/reports/baselines/cross-machine.yaml
                        --fail-on=regression,missing,added,ambiguous --explain
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vmm-run diff exited ${rc}: the host run differs from "
                      "reports/baselines/host (see docs/diffing.md, \"Refreshing a baseline\")")
endif()
# Baselines of another data hash scheme pass with their hashes unseen: record them again.
if(out MATCHES "data_hash_scheme")
  message(FATAL_ERROR "reports/baselines/host names another data hash scheme than this vmm-run: "
                      "record the baselines again (-DREFRESH=ON, see the top of this file)")
endif()
