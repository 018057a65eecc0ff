# CPack: `cd build && cpack -G DEB` makes vmm-run_<version>_<arch>.deb from the install rules
# (cmake/install.cmake), installed under /usr. tools/package_test.sh installs it into a clean
# Debian 12 root and runs it.
#
# Run-time dependencies come from dpkg-shlibdeps (CPACK_DEBIAN_PACKAGE_SHLIBDEPS): the Debian
# packages of the shared libraries the binary links (libyaml-cpp, libstdc++, libgcc-s, libc; see
# `ldd build/vmm-run`). The CUDA runtime is linked statically and loads libcuda.so.1 with dlopen
# only when the CUDA backend is asked for, so the package depends on no NVIDIA package and runs on
# the host backend where there is no GPU or driver. Its kernels carry sm_90 machine code and PTX
# for compute_75 (CMAKE_CUDA_ARCHITECTURES "90-real;75-virtual"), which the driver JIT-compiles
# for any other GPU from sm_75 up; `vmm-run --version` says which.
if(NOT TARGET vmm-run)
  return()
endif()

set(CPACK_PACKAGE_NAME vmm-run)
set(CPACK_PACKAGE_VENDOR "vmm-run")
set(CPACK_PACKAGE_CONTACT "vmm-run maintainers <vmm-run@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Runs CUDA virtual memory management and CUDA graph scenarios and reports as JSON")
set(CPACK_PACKAGE_DESCRIPTION
    "vmm-run runs YAML scenarios of CUDA VMM steps (reserve, create, map, set access, unmap,\n"
    "release), kernel launches and CUDA graph capture/replay/update against the CUDA driver or a\n"
    "Linux mmap/memfd twin, verifies every check, writes JSON reports, and compares reports in CI\n"
    "with `vmm-run diff`.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # vmm-run_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")

include(CPack)
