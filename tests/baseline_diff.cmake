# ctest `baseline_diff`: runs every scenarios/*.yaml on the host backend into a fresh directory and
# diffs the reports against reports/baselines/host/ with reports/baselines/cross-machine.yaml
# (timings and device ignored: see that file). Fails on regressions, on a scenario without a
# baseline (added) or a baseline without a scenario (missing), and on ambiguous pairs.
# Included from tests/CMakeLists.txt; needs the vmm-run target. docs/diffing.md says how to
# refresh the baselines on purpose.
if(TARGET vmm-run)
  add_test(NAME baseline_diff
           COMMAND ${CMAKE_COMMAND}
                   -DVMMRUN=$<TARGET_FILE:vmm-run>
                   -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/baseline_diff
                   -P ${CMAKE_CURRENT_LIST_DIR}/baseline_diff_run.cmake)
  # Runs every committed scenario at full size (on a machine with the memory, such as the H200's
  # 128 GiB host, data_plane_16g holds 48 GiB on the twin): one such test at a time
  # (RESOURCE_LOCK), however many CTest runs beside it with -j.
  set_tests_properties(baseline_diff PROPERTIES LABELS "e2e;baseline" TIMEOUT 900
                                                RESOURCE_LOCK full_size_scenarios
                                                ENVIRONMENT ${VMMRUN_TEST_HOST_MEMORY})
endif()
