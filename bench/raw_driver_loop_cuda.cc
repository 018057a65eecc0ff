#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

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

  Threaded RunThreaded(int threads, int cycles, const ThreadedOptions& options) override {
    const bool map_only = options.map_only, setup_on_caller = options.setup_on_caller;
    const auto gap = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double, std::nano>(options.gap_ns));
    Threaded out;
    std::mutex mu;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false}, failed{false};
    int ordinal = 0;
    cudaGetDevice(&ordinal);
    // Set up here with setup_on_caller (else each thread's own, made and freed by it).
    std::vector<CUdeviceptr> vas(static_cast<size_t>(threads), 0);
    std::vector<CUmemGenericAllocationHandle> kepts(static_cast<size_t>(threads), 0);
    bool set_up = true;
    for (int t = 0; setup_on_caller && set_up && t < threads; ++t) {
      set_up = api_.cuMemAddressReserve(&vas[t], page_, page_, 0, 0) == CUDA_SUCCESS &&
               (!map_only || api_.cuMemCreate(&kepts[t], page_, &prop_, 0) == CUDA_SUCCESS);
    }
    auto tear_down = [&] {
      for (int t = 0; setup_on_caller && t < threads; ++t) {
        if (kepts[t] != 0) api_.cuMemRelease(kepts[t]);
        if (vas[t] != 0) api_.cuMemAddressFree(vas[t], page_);
      }
    };
    if (!set_up) {
      tear_down();
      Fail("threaded loop's setup");
      return out;
    }
    std::chrono::steady_clock::time_point start;
    std::vector<std::chrono::steady_clock::time_point> finished(static_cast<size_t>(threads));
    {
      std::vector<std::jthread> workers;
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          cudaSetDevice(ordinal);  // the primary context, current on this thread
          // Latencies by op, in room made before the barrier: between two calls the loop reads the
          // clock and stores a number, no more than the runner does.
          enum { kCreate, kMap, kSetAccess, kUnmap, kRelease, kOps };
          std::vector<double> mine[kOps];
          for (std::vector<double>& v : mine) v.reserve(static_cast<size_t>(cycles));
          auto timed = [&](int op, auto call) {
            if (options.context_query) {
              CUcontext current = nullptr;
              if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS) failed = true;
            }
            const auto t0 = std::chrono::steady_clock::now();
            const bool ok = call() == CUDA_SUCCESS;
            const auto t1 = std::chrono::steady_clock::now();
            mine[op].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            if (!ok) failed = true;
            if (gap.count() > 0) {
              while (std::chrono::steady_clock::now() - t1 < gap) {
              }
            }
            return ok;
          };
          CUdeviceptr va = vas[t];
          CUmemGenericAllocationHandle kept = kepts[t];
          bool ok = setup_on_caller ||
                    (api_.cuMemAddressReserve(&va, page_, page_, 0, 0) == CUDA_SUCCESS &&
                     (!map_only || api_.cuMemCreate(&kept, page_, &prop_, 0) == CUDA_SUCCESS));
          ++ready;
          while (!go.load()) std::this_thread::yield();
          for (int i = 0; ok && i < cycles; ++i) {
            CUmemGenericAllocationHandle h = kept;
            if (map_only) {
              ok = timed(kMap, [&] { return api_.cuMemMap(va, page_, 0, h, 0); }) &&
                   timed(kUnmap, [&] { return api_.cuMemUnmap(va, page_); });
              continue;
            }
            ok = timed(kCreate, [&] { return api_.cuMemCreate(&h, page_, &prop_, 0); }) &&
                 timed(kMap, [&] { return api_.cuMemMap(va, page_, 0, h, 0); }) &&
                 timed(kSetAccess, [&] { return api_.cuMemSetAccess(va, page_, &access_, 1); }) &&
                 timed(kUnmap, [&] { return api_.cuMemUnmap(va, page_); }) &&
                 timed(kRelease, [&] { return api_.cuMemRelease(h); });
          }
          finished[t] = std::chrono::steady_clock::now();
          if (!ok) failed = true;
          if (!setup_on_caller && kept != 0) api_.cuMemRelease(kept);
          if (!setup_on_caller && va != 0) api_.cuMemAddressFree(va, page_);
          static constexpr const char* kNames[kOps] = {"create", "map", "set_access", "unmap",
                                                       "release"};
          std::lock_guard<std::mutex> lock(mu);
          for (int op = 0; op < kOps; ++op) {
            if (mine[op].empty()) continue;
            std::vector<double>& all = out.latency_us[kNames[op]];
            all.insert(all.end(), mine[op].begin(), mine[op].end());
          }
        });
      }
      while (ready.load() < threads) std::this_thread::yield();
      start = std::chrono::steady_clock::now();
      go = true;
    }  // joined
    out.wall_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    for (const auto& end : finished)
      out.finish_us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    tear_down();
    if (failed) {
      Fail("threaded loop");
      out.wall_us = -1;
    }
    return out;
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
