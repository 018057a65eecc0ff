#include "runner/engine/cuda/cuda_test_util.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <sstream>
#include <thread>

#include "kernels/datagen.h"
#include "runner/engine/cuda/cuda_engine.h"

namespace vmm::testing_cuda {

uint64_t RoundUp(uint64_t bytes, uint64_t granularity) {
  return (bytes + granularity - 1) / granularity * granularity;
}

std::string DescribeMismatches(const std::vector<float>& want, const std::vector<float>& got,
                               uint64_t* count) {
  std::ostringstream out;
  *count = 0;
  if (want.size() != got.size()) {
    *count = std::max(want.size(), got.size());
    out << " sizes differ: want " << want.size() << " got " << got.size();
    return out.str();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    const uint32_t w = std::bit_cast<uint32_t>(want[i]);
    const uint32_t g = std::bit_cast<uint32_t>(got[i]);
    if (w == g) continue;
    if (++*count <= 5) {
      out << " [" << i << "] want " << want[i] << " (0x" << std::hex << w << ") got " << got[i]
          << " (0x" << g << std::dec << ")";
    }
  }
  return out.str();
}

std::vector<float> Expected(uint64_t seed, uint64_t count) {
  std::vector<float> out(count);
  for (uint64_t i = 0; i < count; ++i) out[i] = datagen::FillValue(seed, i);
  return out;
}

std::vector<float> HostMatmul(const std::vector<float>& a, const std::vector<float>& b, uint32_t m,
                              uint32_t n, uint32_t k) {
  std::vector<float> bt(static_cast<size_t>(k) * n);  // B transposed: contiguous columns
  for (uint32_t p = 0; p < k; ++p)
    for (uint32_t j = 0; j < n; ++j) bt[static_cast<size_t>(j) * k + p] = b[size_t{p} * n + j];
  std::vector<float> c(static_cast<size_t>(m) * n);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint32_t i = t; i < m; i += threads) {
        const float* row = &a[static_cast<size_t>(i) * k];
        for (uint32_t j = 0; j < n; ++j) {
          const float* col = &bt[static_cast<size_t>(j) * k];
          float acc = 0.0f;
          for (uint32_t p = 0; p < k; ++p) acc = std::fmaf(row[p], col[p], acc);
          c[static_cast<size_t>(i) * n + j] = acc;
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  return c;
}

std::string SkipReason(const Status& unavailable) {
  const std::string& why = unavailable.message();
  return why.rfind("no CUDA device", 0) == 0 ? why : "no CUDA device: " + why;
}

void CudaEngineTest::SetUp() {
  StatusOr<std::unique_ptr<Engine>> e = CreateCudaEngine(0);
  if (!e.ok()) GTEST_SKIP() << SkipReason(e.status());
  engine_ = std::move(e).value();
  gran_ = engine_->info().granularity_min;
}

void CudaEngineTest::NewBuffer(uint64_t bytes, DevicePtr* va, AllocHandle* handle) {
  const uint64_t size = RoundUp(std::max<uint64_t>(bytes, 1), gran_);
  AllocHandle h;
  ASSERT_OK(engine_->Reserve(size, 0, va));
  ASSERT_OK(engine_->Create(size, &h));
  ASSERT_OK(engine_->Map(*va, size, 0, h));
  ASSERT_OK(engine_->SetAccess(*va, size, Access::kReadWrite));
  if (handle != nullptr) *handle = h;
}

std::vector<float> CudaEngineTest::Read(DevicePtr va, uint64_t count) {
  std::vector<float> out(count);
  const Status s = engine_->CopyToHost(va, count * sizeof(float), out.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

}  // namespace vmm::testing_cuda
