// GPU tests of the CUDA engine's VMM calls, kernels and data paths (binary vmm_gpu_tests, ctest
// label "gpu"); graphs and lifetime are in cuda_graph_test.cc. Data is checked bit for bit against
// the host formulas; failures print the first differing indices and values.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/datagen.h"
#include "runner/engine/cuda/cuda_test_util.h"
#include "runner/engine/engine.h"

namespace vmm::testing_cuda {
namespace {

TEST_F(CudaEngineTest, DeviceInfoIsComplete) {
  const DeviceInfo& info = engine_->info();
  EXPECT_EQ(info.backend, "cuda");
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(info.ordinal, 0);
  EXPECT_NE(info.compute_capability.find('.'), std::string::npos) << info.compute_capability;
  EXPECT_NE(info.driver_version.find('.'), std::string::npos) << info.driver_version;
  EXPECT_NE(info.runtime_version.find('.'), std::string::npos) << info.runtime_version;
  EXPECT_TRUE(info.vmm_supported);
  ASSERT_GT(info.granularity_min, 0u);
  EXPECT_EQ(info.granularity_min & (info.granularity_min - 1), 0u) << "not a power of two";
  EXPECT_EQ(info.granularity_recommended % info.granularity_min, 0u);
  EXPECT_GT(info.total_memory, info.granularity_min);
  std::printf("device: %s, cc %s, driver %s, runtime %s, granularity %llu/%llu B\n",
              info.name.c_str(), info.compute_capability.c_str(), info.driver_version.c_str(),
              info.runtime_version.c_str(), static_cast<unsigned long long>(info.granularity_min),
              static_cast<unsigned long long>(info.granularity_recommended));
}

TEST_F(CudaEngineTest, ReserveCreateMapSetAccessAndBack) {
  DevicePtr va = 0;
  AllocHandle h;
  ASSERT_OK(engine_->Reserve(2 * gran_, 0, &va));
  EXPECT_EQ(va % gran_, 0u);
  ASSERT_OK(engine_->Create(gran_, &h));
  ASSERT_OK(engine_->Map(va + gran_, gran_, 0, h));  // the second granule of the range
  ASSERT_OK(engine_->SetAccess(va + gran_, gran_, Access::kReadWrite));
  const uint64_t count = gran_ / sizeof(float);
  ASSERT_OK(engine_->Fill(va + gran_, count, 7, nullptr));
  uint64_t mismatches = 0;
  const std::string diff =
      DescribeMismatches(Expected(7, count), Read(va + gran_, count), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
  SyncNote note;
  ASSERT_OK(engine_->Unmap(va + gran_, gran_, &note));
  ASSERT_OK(engine_->Release(h, &note));
  EXPECT_FALSE(note.waited);  // Unmap already drained the stream
  ASSERT_OK(engine_->Free(va, 2 * gran_));
}

TEST_F(CudaEngineTest, RemapKeepsTheAddressAndShowsTheNewMemory) {
  const uint64_t count = gran_ / sizeof(float);
  DevicePtr va = 0;
  DevicePtr staging = 0;
  AllocHandle first;
  AllocHandle second;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(gran_, &va, &first));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(gran_, &staging, &second));
  ASSERT_OK(engine_->Fill(va, count, 1, nullptr));
  ASSERT_OK(engine_->Fill(staging, count, 2, nullptr));  // new data, written elsewhere
  SyncNote note;
  ASSERT_OK(engine_->Unmap(va, gran_, &note));
  ASSERT_OK(engine_->Release(first, &note));
  ASSERT_OK(engine_->Map(va, gran_, 0, second));  // the same VA, the other physical memory
  ASSERT_OK(engine_->SetAccess(va, gran_, Access::kReadWrite));
  uint64_t mismatches = 0;
  const std::string diff = DescribeMismatches(Expected(2, count), Read(va, count), &mismatches);
  EXPECT_EQ(mismatches, 0u) << "the remapped VA does not show the new memory:" << diff;
  uint64_t at_va = 0;
  uint64_t at_staging = 0;
  ASSERT_OK(engine_->Checksum(va, count, &at_va));
  ASSERT_OK(engine_->Checksum(staging, count, &at_staging));
  EXPECT_EQ(at_va, at_staging);
}

// Ranges the driver refuses (observed on driver 580.159, CUDA 13.0) come back as error Statuses
// naming the driver call, and leave the engine working. Not among them: cuMemUnmap over a
// reserved range with nothing mapped, which that driver accepts (printed, not asserted).
TEST_F(CudaEngineTest, BadRangesAreErrorsNotCrashes) {
  DevicePtr va = 0;
  AllocHandle h;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(2 * gran_, &va, &h));  // one mapping of two granules
  DevicePtr spare = 0;
  ASSERT_OK(engine_->Reserve(2 * gran_, 0, &spare));
  SyncNote note;
  auto expect_refused = [](const Status& s, const char* driver_call, const char* what) {
    EXPECT_EQ(s.code(), Code::kRuntime) << what << ": " << s.message();
    EXPECT_NE(s.message().find(driver_call), std::string::npos) << what << ": " << s.message();
    EXPECT_NE(s.message().find(" at runner/engine/cuda/"), std::string::npos)
        << "paths should be project-relative: " << s.message();
  };
  expect_refused(engine_->Unmap(0x1000, gran_, &note), "cuMemUnmap", "unmap of an unreserved VA");
  expect_refused(engine_->Unmap(va, gran_ / 2, &note), "cuMemUnmap", "unmap of a partial granule");
  expect_refused(engine_->Unmap(va + gran_, gran_, &note), "cuMemUnmap",
                 "unmap of the second half of one mapping");
  expect_refused(engine_->Free(va, 2 * gran_), "cuMemAddressFree", "free while mapped");
  expect_refused(engine_->Free(spare, gran_), "cuMemAddressFree", "free with the wrong size");
  expect_refused(engine_->Free(0x1000, gran_), "cuMemAddressFree", "free of an unreserved VA");
  expect_refused(engine_->Map(spare, gran_, 2 * gran_, h), "cuMemMap",
                 "map past the end of the allocation");
  expect_refused(engine_->Map(va, gran_, 0, h), "cuMemMap", "map over a mapping");
  expect_refused(engine_->SetAccess(spare, gran_, Access::kReadWrite), "cuMemSetAccess",
                 "set_access on an unmapped range");
  const Status unknown = engine_->Release(AllocHandle{999999}, &note);
  EXPECT_EQ(unknown.code(), Code::kRuntime) << unknown.message();
  EXPECT_NE(unknown.message().find("unknown allocation handle"), std::string::npos);
  const Status accepted = engine_->Unmap(spare, gran_, &note);
  std::printf("driver on cuMemUnmap of a reserved, unmapped range: %s\n",
              accepted.ok() ? "accepted" : accepted.message().c_str());

  // None of this left an error behind: the engine still computes, and cleans up in order.
  ASSERT_OK(engine_->Fill(va, 1024, 3, nullptr));
  uint64_t hash = 0;
  ASSERT_OK(engine_->Checksum(va, 1024, &hash));
  ASSERT_OK(engine_->Free(spare, 2 * gran_));
  EXPECT_EQ(engine_->Free(spare, 2 * gran_).code(), Code::kRuntime) << "freed twice";
  ASSERT_OK(engine_->Unmap(va, 2 * gran_, &note));
  ASSERT_OK(engine_->Release(h, &note));
  EXPECT_EQ(engine_->Release(h, &note).code(), Code::kRuntime) << "released twice";
  ASSERT_OK(engine_->Free(va, 2 * gran_));
}

TEST_F(CudaEngineTest, FillIsBitIdenticalToDatagen) {
  const uint64_t count = uint64_t{1} << 20;
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(count * sizeof(float), &va));
  OpTiming timing;
  ASSERT_OK(engine_->Fill(va, count, 0x5eed, &timing));
  EXPECT_GT(timing.gpu_us, 0.0);
  uint64_t mismatches = 0;
  const std::string diff =
      DescribeMismatches(Expected(0x5eed, count), Read(va, count), &mismatches);
  EXPECT_EQ(mismatches, 0u) << diff;
}

struct MatmulCase {
  uint32_t m, n, k;
};
// "37x53x29" in test names and ctest listings.
void PrintTo(const MatmulCase& c, std::ostream* os) { *os << c.m << "x" << c.n << "x" << c.k; }

class CudaMatmulTest : public CudaEngineTest, public ::testing::WithParamInterface<MatmulCase> {};

TEST_P(CudaMatmulTest, BitIdenticalToHostFmafLoopAndWithinFp64Bound) {
  const auto [m, n, k] = GetParam();
  DevicePtr a = 0, b = 0, c = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(uint64_t{m} * k * 4, &a));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(uint64_t{k} * n * 4, &b));
  ASSERT_NO_FATAL_FAILURE(NewBuffer(uint64_t{m} * n * 4, &c));
  ASSERT_OK(engine_->Fill(a, uint64_t{m} * k, 11, nullptr));
  ASSERT_OK(engine_->Fill(b, uint64_t{k} * n, 12, nullptr));
  ASSERT_OK(engine_->Fill(c, uint64_t{m} * n, 13, nullptr));  // garbage the kernel must overwrite
  OpTiming timing;
  ASSERT_OK(engine_->Matmul({a, b, c, m, n, k}, &timing));
  EXPECT_GT(timing.gpu_us, 0.0);
  const std::vector<float> ha = Read(a, uint64_t{m} * k);
  const std::vector<float> hb = Read(b, uint64_t{k} * n);
  const std::vector<float> got = Read(c, uint64_t{m} * n);
  const std::vector<float> want = HostMatmul(ha, hb, m, n, k);
  uint64_t mismatches = 0;
  const std::string diff = DescribeMismatches(want, got, &mismatches);
  EXPECT_EQ(mismatches, 0u) << m << "x" << n << "x" << k << ":" << diff;

  // Independent of the fmaf order: |c - exact| <= gamma_k * sum |a||b| (Higham, fp32 dot).
  const double u = std::ldexp(1.0, -24);
  const double gamma = k * u / (1 - k * u);
  uint64_t out_of_bound = 0;
  uint64_t nonzero = 0;
  for (uint32_t i = 0; i < m; i += std::max(1u, m / 64)) {
    for (uint32_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (uint32_t p = 0; p < k; ++p) {
        const double prod = double{ha[size_t{i} * k + p]} * double{hb[size_t{p} * n + j]};
        exact += prod;
        magnitude += std::fabs(prod);
      }
      const double value = got[size_t{i} * n + j];
      if (std::fabs(value - exact) > gamma * magnitude + 1e-30) ++out_of_bound;
      if (value != 0) ++nonzero;
    }
  }
  EXPECT_EQ(out_of_bound, 0u);
  EXPECT_GT(nonzero, 0u) << "the result is all zeros";
  std::printf("matmul %ux%ux%u: %.1f us\n", m, n, k, timing.gpu_us);
}

INSTANTIATE_TEST_SUITE_P(Sizes, CudaMatmulTest,
                         // Whole 128 x 128 tiles and partial ones, k a multiple of the 8-term
                         // step or not, 16-byte loads (k, n multiples of 4) or single floats.
                         ::testing::Values(MatmulCase{37, 53, 29}, MatmulCase{256, 256, 256},
                                           MatmulCase{1000, 1000, 1000}, MatmulCase{64, 64, 1},
                                           MatmulCase{1, 1, 70}, MatmulCase{130, 70, 17},
                                           MatmulCase{1, 1, 1}, MatmulCase{127, 129, 65},
                                           MatmulCase{1000, 1000, 999}, MatmulCase{300, 260, 1028},
                                           MatmulCase{129, 257, 8}, MatmulCase{2048, 2048, 2048}),
                         [](const ::testing::TestParamInfo<MatmulCase>& info) {
                           return std::to_string(info.param.m) + "x" +
                                  std::to_string(info.param.n) + "x" + std::to_string(info.param.k);
                         });

// Every path of the kernel: scalar only (an unaligned source), whole vectors with and without the
// unrolled loop (2^24 words: four vectors in flight per thread), and a tail of 1-3 words.
TEST_F(CudaEngineTest, ChecksumEqualsTheHostFormula) {
  for (const uint64_t count :
       {uint64_t{1}, uint64_t{7}, uint64_t{1000003}, uint64_t{1} << 20, (uint64_t{1} << 24) + 3}) {
    DevicePtr va = 0;
    ASSERT_NO_FATAL_FAILURE(NewBuffer(count * 4, &va));
    ASSERT_OK(engine_->Fill(va, count, 99, nullptr));
    for (const uint64_t skip : {uint64_t{0}, uint64_t{1}}) {  // 1: the source is 4-byte aligned
      if (skip >= count) continue;
      uint64_t want = 0;
      for (uint64_t i = skip; i < count; ++i)
        want += datagen::HashWord(std::bit_cast<uint32_t>(datagen::FillValue(99, i)), i - skip);
      uint64_t got = 0;
      ASSERT_OK(engine_->Checksum(va + 4 * skip, count - skip, &got));
      EXPECT_EQ(got, want) << "count " << count << ", skip " << skip;
    }
  }
  DevicePtr va = 0;
  ASSERT_NO_FATAL_FAILURE(NewBuffer(4, &va));
  uint64_t empty = 1;
  ASSERT_OK(engine_->Checksum(va, 0, &empty));
  EXPECT_EQ(empty, 0u);
}

}  // namespace
}  // namespace vmm::testing_cuda
