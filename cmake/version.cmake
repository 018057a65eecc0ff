# Generates version.h with the tool version and the git sha of the source tree (at configure time;
# "-dirty" when the tree had uncommitted changes), and whether the CUDA backend is built, with the
# CUDA runtime version and GPU architectures it was built for (`vmm-run --version` prints them).
# Included after the CUDA check in the top-level CMakeLists.txt.
find_package(Git QUIET)
set(VMMRUN_GIT_SHA "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE _sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(VMMRUN_GIT_SHA "${_sha}")
    execute_process(COMMAND ${GIT_EXECUTABLE} diff --quiet HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    RESULT_VARIABLE _dirty ERROR_QUIET)
    if(NOT _dirty EQUAL 0)
      string(APPEND VMMRUN_GIT_SHA "-dirty")
    endif()
  endif()
endif()
set(VMMRUN_CUDA_BACKEND_DEFINE 0)
set(VMMRUN_CUDA_RUNTIME_VERSION "")
set(VMMRUN_CUDA_ARCHITECTURES "")
if(VMMRUN_HAVE_CUDA)
  set(VMMRUN_CUDA_BACKEND_DEFINE 1)
  set(VMMRUN_CUDA_RUNTIME_VERSION "${CUDAToolkit_VERSION}")
  set(VMMRUN_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in ${PROJECT_BINARY_DIR}/generated/version.h @ONLY)
