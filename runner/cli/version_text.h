// The text of `vmm-run --version`: what was built, from which source, with which CUDA.
//
//   vmm-run 0.1.0 (<git sha>[-dirty])
//   CUDA backend: built
//   CUDA runtime: 13.0.88 (linked statically; the driver is loaded at run time)
//   GPU code: sm_90 machine code; PTX for compute_75 (JIT-compiled on other GPUs)
//
// or, when the build found no CUDA compiler:
//
//   vmm-run 0.1.0 (<git sha>)
//   CUDA backend: not built
//
// The first line is the same as before this text grew (scripts parse it); tests/install_test.cmake
// checks the format of the installed binary's output.
#pragma once

#include <string>

namespace vmm {

// `architectures` is a CMAKE_CUDA_ARCHITECTURES list ("90-real;75-virtual"; a bare "80" means
// both); returns "sm_90 machine code; PTX for compute_75 (JIT-compiled on other GPUs)".
std::string DescribeCudaArchitectures(const std::string& architectures);

// The text above for the given build facts (`cuda_backend` false: the rest is ignored).
std::string VersionText(const std::string& version, const std::string& git_sha, bool cuda_backend,
                        const std::string& cuda_runtime, const std::string& architectures);

// VersionText for this binary (from the generated version.h).
std::string VersionText();

}  // namespace vmm
