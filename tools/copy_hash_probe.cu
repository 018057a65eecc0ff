// Which shape of the snapshot's one-pass copy + hash (kernels/checksum.cu) runs fastest on this
// GPU: loads in flight per thread, grid size, and cache hints, each timed beside the raw
// device-to-device copy in the same run, and each checked against the shipped kernel's hash and
// the copy's own hash. A probe for choosing the kernel's shape, not a test.
//   nvcc -O3 -arch=sm_90 -I. tools/copy_hash_probe.cu -o copy_hash_probe && ./copy_hash_probe 4
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kernels/datagen.h"
#include "kernels/reduce.cuh"

namespace {

using vmm::datagen::HashKeyed;
using vmm::datagen::kIndexKey;
using vmm::kernels::detail::kBlockThreads;

// As kernels/checksum.cu hashes four words: one index key for the four.
__device__ __forceinline__ unsigned long long Hash4(uint4 w, uint64_t i) {
  const uint64_t key = vmm::datagen::IndexKey(i);
  return HashKeyed(w.x, key) + HashKeyed(w.y, key + kIndexKey) +
         HashKeyed(w.z, key + 2 * kIndexKey) + HashKeyed(w.w, key + 3 * kIndexKey);
}

// Aligned buffers, a count of whole vectors: the loop of kernels/checksum.cu with its knobs.
template <int kLoads, bool kStreaming>
__global__ void __launch_bounds__(kBlockThreads)
    CopyHash(const uint4* src, uint4* dst, uint64_t vectors, unsigned long long* hash) {
  __shared__ unsigned long long warp_sums[vmm::kernels::detail::kWarps];
  unsigned long long sum = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  uint64_t v = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; v + (kLoads - 1) * stride < vectors; v += kLoads * stride) {
    uint4 w[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      w[u] = kStreaming ? __ldcs(src + v + u * stride) : __ldg(src + v + u * stride);
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      if (dst != nullptr) {
        if (kStreaming) {
          __stcs(dst + v + u * stride, w[u]);
        } else {
          dst[v + u * stride] = w[u];
        }
      }
      sum += Hash4(w[u], (v + u * stride) * 4);
    }
  }
  for (; v < vectors; v += stride) {
    const uint4 w = src[v];
    if (dst != nullptr) dst[v] = w;
    sum += Hash4(w, v * 4);
  }
  sum = vmm::kernels::detail::BlockSum(sum, warp_sums);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(hash, sum);
}

using Kernel = void (*)(const uint4*, uint4*, uint64_t, unsigned long long*);

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

float TimeMs(int runs, const auto& fn) {
  cudaEvent_t a, b;
  Check(cudaEventCreate(&a), "event");
  Check(cudaEventCreate(&b), "event");
  fn();  // warm
  Check(cudaEventRecord(a), "record");
  for (int r = 0; r < runs; ++r) fn();
  Check(cudaEventRecord(b), "record");
  Check(cudaEventSynchronize(b), "sync");
  float ms = 0;
  Check(cudaEventElapsedTime(&ms, a, b), "elapsed");
  return ms / runs;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t gib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4;
  const uint64_t bytes = gib << 30, vectors = bytes / 16;
  const int runs = 10;
  uint4 *src = nullptr, *dst = nullptr;
  unsigned long long* hash = nullptr;
  Check(cudaMalloc(&src, bytes), "malloc");
  Check(cudaMalloc(&dst, bytes), "malloc");
  Check(cudaMalloc(&hash, 8), "malloc");
  Check(cudaMemset(src, 0x5a, bytes), "memset");
  int sms = 0;
  Check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "sms");
  const float raw =
      TimeMs(runs, [&] { cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice); });
  std::printf("raw cudaMemcpy D2D, %llu GiB: %.3f ms\n", static_cast<unsigned long long>(gib), raw);
  unsigned long long reference = 0;
  struct Variant {
    const char* name;
    Kernel kernel;
  } variants[] = {{"loads 4, __ldg", CopyHash<4, false>},
                  {"loads 8, __ldg", CopyHash<8, false>},
                  {"loads 2, __ldg", CopyHash<2, false>},
                  {"loads 4, streaming", CopyHash<4, true>},
                  {"loads 8, streaming", CopyHash<8, true>}};
  const uint32_t grids[] = {4096u, static_cast<uint32_t>(sms * 8), static_cast<uint32_t>(sms * 16),
                            static_cast<uint32_t>(sms * 32)};
  for (const Variant& v : variants) {
    for (const uint32_t grid : grids) {
      for (const bool copy : {true, false}) {
        const float ms = TimeMs(runs, [&] {
          cudaMemsetAsync(hash, 0, 8);
          v.kernel<<<grid, kBlockThreads>>>(src, copy ? dst : nullptr, vectors, hash);
        });
        unsigned long long h = 0;
        Check(cudaMemcpy(&h, hash, 8, cudaMemcpyDeviceToHost), "read hash");
        if (reference == 0) reference = h;
        std::printf("%-20s grid %6u %-9s %.3f ms  ratio to raw copy %.2f  hash %s\n", v.name, grid,
                    copy ? "copy+hash" : "hash", ms, raw / ms,
                    h == reference ? "same" : "DIFFERENT");
      }
    }
  }
  return 0;
}
