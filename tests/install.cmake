# ctest `install`: `cmake --install` into a scratch prefix, then the installed binary runs an
# installed scenario on the host backend and prints its version (tests/install_run.cmake).
# Included from tests/CMakeLists.txt. The Debian package is checked by tools/package_test.sh
# (too slow for CTest: it bootstraps a Debian root).
if(TARGET vmm-run)
  add_test(NAME install
           COMMAND ${CMAKE_COMMAND}
                   -DBUILD_DIR=${PROJECT_BINARY_DIR}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_test
                   -DCUDA_BACKEND=${VMMRUN_HAVE_CUDA}
                   -P ${CMAKE_CURRENT_LIST_DIR}/install_run.cmake)
  set_tests_properties(install PROPERTIES LABELS "e2e;install" TIMEOUT 300)
endif()

# The completion scripts the build generates (target vmm_completions in cmake/install.cmake) work
# in their shells.
if(TARGET vmm-run)
  foreach(shell bash zsh)
    set(script ${PROJECT_BINARY_DIR}/completions/vmm-run)
    if(shell STREQUAL "zsh")
      set(script ${PROJECT_BINARY_DIR}/completions/_vmm-run)
    endif()
    add_test(NAME completion_${shell}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/completion_test.sh ${shell} ${script})
    set_tests_properties(completion_${shell} PROPERTIES LABELS "e2e" SKIP_RETURN_CODE 77)
  endforeach()
endif()
