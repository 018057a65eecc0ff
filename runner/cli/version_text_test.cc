// `vmm-run --version`: the version line, then the CUDA backend and what its kernels carry.
#include "runner/cli/version_text.h"

#include <gtest/gtest.h>

#include "version.h"

namespace vmm {
namespace {

TEST(VersionTextTest, WithoutTheCudaBackend) {
  EXPECT_EQ(VersionText("0.1.0", "abc123", false, "", ""),
            "vmm-run 0.1.0 (abc123)\nCUDA backend: not built");
}

TEST(VersionTextTest, WithTheCudaBackend) {
  EXPECT_EQ(VersionText("0.1.0", "abc123-dirty", true, "13.0.88", "90-real;75-virtual"),
            "vmm-run 0.1.0 (abc123-dirty)\n"
            "CUDA backend: built\n"
            "CUDA runtime: 13.0.88 (linked statically; the driver is loaded at run time)\n"
            "GPU code: sm_90 machine code; PTX for compute_75 (JIT-compiled on other GPUs)");
}

TEST(VersionTextTest, DescribesArchitectureLists) {
  EXPECT_EQ(DescribeCudaArchitectures("80"),
            "sm_80 machine code; PTX for compute_80 (JIT-compiled on other GPUs)");
  EXPECT_EQ(DescribeCudaArchitectures("90-real;100-real"), "sm_90, sm_100 machine code");
  EXPECT_EQ(DescribeCudaArchitectures("75-virtual"),
            "PTX for compute_75 (JIT-compiled on other GPUs)");
  EXPECT_EQ(DescribeCudaArchitectures(""), "unknown");
}

TEST(VersionTextTest, ThisBinary) {
  const std::string text = VersionText();
  EXPECT_EQ(text.rfind(std::string("vmm-run ") + VMMRUN_VERSION + " (", 0), 0u) << text;
  EXPECT_NE(text.find(VMMRUN_CUDA_BACKEND ? "CUDA backend: built\nCUDA runtime: "
                                          : "CUDA backend: not built"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace vmm
