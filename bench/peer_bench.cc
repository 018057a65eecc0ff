// Peer copy bandwidth between two GPUs, in one run (the numbers docs/backends.md quotes):
//   1. VMM, access off: src is device 0's VMM memory readable by device 0 only, dst device 1's
//      readable by device 1 only; cudaMemcpyPeerAsync (the driver stages the copy).
//   2. VMM, access on: both ranges get read_write for BOTH devices in one cuMemSetAccess each;
//      cudaMemcpyAsync on device 0's stream between the two VAs (a direct peer copy).
//   3. cudaMalloc, peer access off: cudaMemcpyPeerAsync between plain allocations.
//   4. cudaMalloc, peer access on: the same after cudaDeviceEnablePeerAccess both ways.
// Each figure is the median GB/s (1e9 bytes/s) of --reps timed copies (CUDA events on the copying
// stream), after one untimed copy. Prints figures; asserts nothing. With fewer than two devices,
// or no CUDA at all, it prints "skipped: ..." and exits 0.
//
//   peer_bench [--bytes N] [--reps R]   (N a multiple of 2 MiB, default 1 GiB; R >= 1, default 10)
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/engine/cuda/vmm_handles.h"

namespace {

bool Check(const vmm::Status& s) {
  if (!s.ok()) std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return s.ok();
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// One VMM range of `bytes` on `device`, mapped, readable and writable by `device` only.
struct VmmBuffer {
  const vmm::cuda::DriverApi* api = nullptr;
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle handle = 0;
  uint64_t bytes = 0;
  bool mapped = false;

  bool Make(const vmm::cuda::DriverApi& driver, int device, uint64_t size) {
    api = &driver;
    bytes = size;
    const CUmemAllocationProp prop = vmm::cuda::DeviceAllocationProp(device);
    if (!Check(CU_CALL(driver, cuMemAddressReserve(&va, size, 2ull << 20, 0, 0)))) return false;
    if (!Check(CU_CALL(driver, cuMemCreate(&handle, size, &prop, 0)))) return false;
    if (!Check(CU_CALL(driver, cuMemMap(va, size, 0, handle, 0)))) return false;
    mapped = true;
    return SetAccess({device});
  }
  // Gives read_write to every device in `devices`, in one call.
  bool SetAccess(const std::vector<int>& devices) {
    std::vector<CUmemAccessDesc> descs(devices.size());
    for (size_t i = 0; i < devices.size(); ++i) {
      descs[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      descs[i].location.id = devices[i];
      descs[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    return Check(CU_CALL(*api, cuMemSetAccess(va, bytes, descs.data(), descs.size())));
  }
  ~VmmBuffer() {
    if (api == nullptr) return;
    if (mapped) CU_CALL_NOTHROW(*api, cuMemUnmap(va, bytes));
    if (handle != 0) CU_CALL_NOTHROW(*api, cuMemRelease(handle));
    if (va != 0) CU_CALL_NOTHROW(*api, cuMemAddressFree(va, bytes));
  }
};

// Median GB/s of `reps` runs of `copy` (enqueues one copy on `stream`), timed with events.
double TimeCopies(cudaStream_t stream, uint64_t bytes, int reps,
                  const std::function<cudaError_t()>& copy) {
  cudaEvent_t start = nullptr, stop = nullptr;
  if (!Check(CUDA_CALL(cudaEventCreate(&start))) || !Check(CUDA_CALL(cudaEventCreate(&stop))))
    return -1;
  std::vector<double> rates;
  bool ok = Check(CUDA_CALL(copy())) && Check(CUDA_CALL(cudaStreamSynchronize(stream)));
  for (int r = 0; ok && r < reps; ++r) {
    float ms = 0;
    ok = Check(CUDA_CALL(cudaEventRecord(start, stream))) && Check(CUDA_CALL(copy())) &&
         Check(CUDA_CALL(cudaEventRecord(stop, stream))) &&
         Check(CUDA_CALL(cudaEventSynchronize(stop))) &&
         Check(CUDA_CALL(cudaEventElapsedTime(&ms, start, stop)));
    if (ok && ms > 0) rates.push_back(static_cast<double>(bytes) / (ms * 1e6));
  }
  CUDA_CALL_NOTHROW(cudaEventDestroy(start));
  CUDA_CALL_NOTHROW(cudaEventDestroy(stop));
  return ok ? Median(rates) : -1;
}

void Print(const char* what, double gbps) {
  if (gbps < 0) {
    std::printf("  %-52s failed (see the error above)\n", what);
  } else {
    std::printf("  %-52s %9.1f GB/s\n", what, gbps);
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t bytes = 1ull << 30;
  int reps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--bytes")) bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  if (bytes == 0 || bytes % (2ull << 20) != 0 || reps < 1) {
    std::fprintf(stderr, "usage: peer_bench [--bytes N (multiple of 2 MiB)] [--reps R>=1]\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    (void)cudaGetLastError();
    std::printf("skipped: needs two CUDA devices (found %d)\n", count);
    return 0;
  }
  int can01 = 0, can10 = 0;
  if (!Check(CUDA_CALL(cudaDeviceCanAccessPeer(&can01, 0, 1))) ||
      !Check(CUDA_CALL(cudaDeviceCanAccessPeer(&can10, 1, 0))))
    return 4;
  if (!Check(CUDA_CALL(cudaSetDevice(0)))) return 4;
  vmm::StatusOr<vmm::cuda::DriverApi> api = vmm::cuda::LoadDriverApi();
  if (!api.ok()) {
    std::printf("skipped: %s\n", api.status().message().c_str());
    return 0;
  }
  cudaStream_t stream = nullptr;  // device 0's
  if (!Check(CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)))) return 4;
  std::printf(
      "peer copy device 0 -> device 1, %.0f MiB, median of %d (peer capable: 0->1 %d, "
      "1->0 %d)\n",
      static_cast<double>(bytes) / (1 << 20), reps, can01, can10);

  {
    VmmBuffer src, dst;
    if (!src.Make(*api, 0, bytes) || !dst.Make(*api, 1, bytes)) return 4;
    Print("VMM, access off (owner only), cudaMemcpyPeerAsync", TimeCopies(stream, bytes, reps, [&] {
            return cudaMemcpyPeerAsync(reinterpret_cast<void*>(dst.va), 1,
                                       reinterpret_cast<const void*>(src.va), 0, bytes, stream);
          }));
    const bool shared = src.SetAccess({0, 1}) && dst.SetAccess({0, 1});
    Print("VMM, access on (both devices), cudaMemcpyAsync",
          !shared ? -1 : TimeCopies(stream, bytes, reps, [&] {
            return cudaMemcpyAsync(reinterpret_cast<void*>(dst.va),
                                   reinterpret_cast<const void*>(src.va), bytes,
                                   cudaMemcpyDeviceToDevice, stream);
          }));
  }

  void* a = nullptr;
  void* b = nullptr;
  if (!Check(CUDA_CALL(cudaMalloc(&a, bytes)))) return 4;
  if (!Check(CUDA_CALL(cudaSetDevice(1))) || !Check(CUDA_CALL(cudaMalloc(&b, bytes)))) return 4;
  if (!Check(CUDA_CALL(cudaSetDevice(0)))) return 4;
  auto peer_copy = [&] { return cudaMemcpyPeerAsync(b, 1, a, 0, bytes, stream); };
  Print("cudaMalloc, peer access off, cudaMemcpyPeerAsync",
        TimeCopies(stream, bytes, reps, peer_copy));
  bool enabled = can01 != 0 && can10 != 0 && Check(CUDA_CALL(cudaDeviceEnablePeerAccess(1, 0)));
  if (enabled) {
    enabled = Check(CUDA_CALL(cudaSetDevice(1))) &&
              Check(CUDA_CALL(cudaDeviceEnablePeerAccess(0, 0))) &&
              Check(CUDA_CALL(cudaSetDevice(0)));
  }
  Print("cudaMalloc, peer access on, cudaMemcpyPeerAsync",
        enabled ? TimeCopies(stream, bytes, reps, peer_copy) : -1);
  CUDA_CALL_NOTHROW(cudaFree(a));
  CUDA_CALL_NOTHROW(cudaSetDevice(1));
  CUDA_CALL_NOTHROW(cudaFree(b));
  CUDA_CALL_NOTHROW(cudaSetDevice(0));
  CUDA_CALL_NOTHROW(cudaStreamDestroy(stream));
  return 0;
}
