// Shared by the GPU tests (vmm_gpu_tests): a fixture holding a CUDA engine on device 0 (tests skip
// with "no CUDA device: <reason>" without one) and host references for the data checks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/engine/engine.h"

#define ASSERT_OK(expr)                                              \
  do {                                                               \
    const ::vmm::Status status_ = (expr);                            \
    ASSERT_TRUE(status_.ok()) << #expr << ": " << status_.message(); \
  } while (0)

namespace vmm::testing_cuda {

uint64_t RoundUp(uint64_t bytes, uint64_t granularity);

// Counts the elements whose bits differ and describes the first five as
// " [i] want <value> (0x<bits>) got <value> (0x<bits>)".
std::string DescribeMismatches(const std::vector<float>& want, const std::vector<float>& got,
                               uint64_t* count);

// datagen::FillValue(seed, i) for i < count.
std::vector<float> Expected(uint64_t seed, uint64_t count);

// C = A * B under the engine.h contract: acc = std::fmaf(a, b, acc), p ascending, from 0.0f
// (spread over all host threads).
std::vector<float> HostMatmul(const std::vector<float>& a, const std::vector<float>& b, uint32_t m,
                              uint32_t n, uint32_t k);

// "no CUDA device: <reason>" for an unavailable CreateCudaEngine (without repeating the prefix).
std::string SkipReason(const Status& unavailable);

class CudaEngineTest : public ::testing::Test {
 protected:
  void SetUp() override;

  // Reserves, creates, maps and enables read_write access for `bytes` (rounded up to the
  // granularity). Use with ASSERT_NO_FATAL_FAILURE.
  void NewBuffer(uint64_t bytes, DevicePtr* va, AllocHandle* handle = nullptr);
  // CopyToHost of `count` floats (a failure is reported and yields zeros).
  std::vector<float> Read(DevicePtr va, uint64_t count);

  std::unique_ptr<Engine> engine_;
  uint64_t gran_ = 0;
};

}  // namespace vmm::testing_cuda
