#include <cstdio>

#include "bench/raw_driver_loop.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/engine/cuda/vmm_handles.h"

namespace vmm::bench {
namespace {

class CudaRawDriverLoop final : public RawDriverLoop {
 public:
  CudaRawDriverLoop(cuda::DriverApi api, int ordinal, uint64_t page)
      : api_(api), prop_(cuda::DeviceAllocationProp(ordinal)), page_(page) {
    access_.location = prop_.location;
    access_.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }

  double Run(int cycles) override {
    Stopwatch watch;
    CUdeviceptr va = 0;
    if (api_.cuMemAddressReserve(&va, page_, page_, 0, 0) != CUDA_SUCCESS) return Fail("reserve");
    for (int i = 0; i < cycles; ++i) {
      CUmemGenericAllocationHandle h = 0;
      if (api_.cuMemCreate(&h, page_, &prop_, 0) != CUDA_SUCCESS ||
          api_.cuMemMap(va, page_, 0, h, 0) != CUDA_SUCCESS ||
          api_.cuMemSetAccess(va, page_, &access_, 1) != CUDA_SUCCESS ||
          api_.cuMemUnmap(va, page_) != CUDA_SUCCESS || api_.cuMemRelease(h) != CUDA_SUCCESS) {
        return Fail("page cycle");
      }
    }
    if (api_.cuMemAddressFree(va, page_) != CUDA_SUCCESS) return Fail("free");
    return watch.ElapsedUs();
  }

  double ContextQueryNs() override {
    constexpr int kCalls = 1000000;
    CUcontext context = nullptr;
    Stopwatch watch;
    for (int i = 0; i < kCalls; ++i) {
      if (api_.cuCtxGetCurrent(&context) != CUDA_SUCCESS) return Fail("cuCtxGetCurrent");
    }
    return watch.ElapsedUs() * 1000.0 / kCalls;
  }

 private:
  static double Fail(const char* what) {
    std::fprintf(stderr, "error: raw driver loop: %s failed\n", what);
    return -1;
  }

  cuda::DriverApi api_;
  CUmemAllocationProp prop_;
  CUmemAccessDesc access_ = {};
  uint64_t page_;
};

}  // namespace

std::unique_ptr<RawDriverLoop> MakeRawDriverLoop(int ordinal, uint64_t page) {
  StatusOr<cuda::DriverApi> api = cuda::LoadDriverApi();
  if (!api.ok()) {
    std::fprintf(stderr, "error: %s\n", api.status().message().c_str());
    return nullptr;
  }
  return std::make_unique<CudaRawDriverLoop>(*api, ordinal, page);
}

}  // namespace vmm::bench
