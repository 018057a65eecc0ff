# ctest `CiExampleTest.*`: examples/ci/vmm-run.yml, the GitHub Actions workflow users copy, is valid
# YAML with the structure Actions needs, uses no third-party action, calls only `vmm-run`
# subcommands and flags that exist (asked of the built binary's --help), and its host job's
# validate/run/diff steps pass on the reference scenarios and baselines. Included from
# tests/CMakeLists.txt. yaml-cpp is linked directly: the test reads a workflow, not a scenario, and
# runner/yaml's located values would add nothing here.
if(TARGET vmm-run)
  add_executable(vmm_ci_example_tests ci_example_test.cc)
  target_link_libraries(vmm_ci_example_tests PRIVATE ${VMM_YAML_CPP} GTest::gtest GTest::gtest_main)
  target_include_directories(vmm_ci_example_tests PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(vmm_ci_example_tests PRIVATE VMMRUN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                                          VMMRUN_BINARY="$<TARGET_FILE:vmm-run>")
  add_dependencies(vmm_ci_example_tests vmm-run)
  vmm_test_build_options(vmm_ci_example_tests)
  gtest_discover_tests(vmm_ci_example_tests DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "e2e;ci_example" RESOURCE_LOCK full_size_scenarios
                                  ENVIRONMENT ${VMMRUN_TEST_HOST_MEMORY})
endif()
