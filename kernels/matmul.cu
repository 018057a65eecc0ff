// vmm_matmul_f32: fp32 C = A * B, tiled in shared memory and registers.
//
// Each block computes a kTile x kTile (64 x 64) tile of C with kThreads (256) threads; each thread
// owns a 4 x 4 sub-tile. The k dimension is walked in steps of kTileK (16): A and B tiles are
// staged in shared memory and the next step's tiles are prefetched into registers while the current
// one is consumed.
//
// Bit-exactness (engine.h matmul contract): every C element is accumulated by one thread, in one
// register, as acc = __fmaf_rn(A[i,p], B[p,j], acc) for p = 0, 1, ..., k-1 in order, from 0.0f.
// The last, partial k step runs only its k % kTileK valid terms (no zero padding is multiplied in,
// so an Inf or NaN input behaves exactly as in the host loop). __fmaf_rn is never contracted or
// reordered by the compiler, so the result equals the host's std::fmaf loop bit for bit.
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/launch.cuh"
#include "kernels/launch_config.h"

namespace {

constexpr int kTile = static_cast<int>(vmm::kernels::kMatmulTile);
constexpr int kThreads = static_cast<int>(vmm::kernels::kMatmulThreads);
constexpr int kTileK = 16;
constexpr int kMicro = 4;                       // each thread: kMicro x kMicro outputs
constexpr int kThreadsPerRow = kTile / kMicro;  // 16 threads across the tile's columns
constexpr int kAStride = kTile + 4;             // +4 floats: fewer bank conflicts, float4 aligned
constexpr int kALoads = kTile * kTileK / kThreads;  // A elements each thread stages per step
constexpr int kBLoads = kTileK * kTile / kThreads;  // B elements each thread stages per step
static_assert(kThreadsPerRow * kThreadsPerRow == kThreads, "one thread per 4x4 sub-tile");
static_assert(kThreads % kTileK == 0 && kThreads % kTile == 0, "staging layout");

struct Staged {
  float a[kALoads];
  float b[kBLoads];
};

// Reads the A tile [row0, +kTile) x [k0, +kTileK) and the B tile [k0, +kTileK) x [col0, +kTile)
// into registers; elements outside the matrices read as 0 (they are never used, see Accumulate).
__device__ __forceinline__ void LoadTiles(const float* a, const float* b, uint32_t m, uint32_t n,
                                          uint32_t k, uint32_t row0, uint32_t col0, uint32_t k0,
                                          Staged& s) {
  const int t = threadIdx.x;
#pragma unroll
  for (int l = 0; l < kALoads; ++l) {
    const uint32_t row = row0 + t / kTileK + l * (kThreads / kTileK);
    const uint32_t p = k0 + t % kTileK;
    s.a[l] = (row < m && p < k) ? a[static_cast<uint64_t>(row) * k + p] : 0.0f;
  }
#pragma unroll
  for (int l = 0; l < kBLoads; ++l) {
    const uint32_t p = k0 + t / kTile + l * (kThreads / kTile);
    const uint32_t col = col0 + t % kTile;
    s.b[l] = (p < k && col < n) ? b[static_cast<uint64_t>(p) * n + col] : 0.0f;
  }
}

// One k term for the thread's 4 x 4 outputs: acc[i][j] = fma(A[row_i, p], B[p, col_j], acc[i][j]).
__device__ __forceinline__ void Step(const float (*as)[kAStride], const float (*bs)[kTile], int p,
                                     int tx, int ty, float (&acc)[kMicro][kMicro]) {
  const float4 av = *reinterpret_cast<const float4*>(&as[p][ty * kMicro]);
  const float4 bv = *reinterpret_cast<const float4*>(&bs[p][tx * kMicro]);
  const float ar[kMicro] = {av.x, av.y, av.z, av.w};
  const float br[kMicro] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
#pragma unroll
    for (int j = 0; j < kMicro; ++j) acc[i][j] = __fmaf_rn(ar[i], br[j], acc[i][j]);
  }
}

}  // namespace

// Launched with MatmulLaunch(m, n): grid (ceil(n/64), ceil(m/64)), 256 threads, no dynamic shared
// memory. extern "C" so that the kernel's symbol is its name (vmm_matmul_f32) in ncu and cuobjdump.
extern "C" __global__ void __launch_bounds__(kThreads)
    vmm_matmul_f32(const float* a, const float* b, float* c, uint32_t m, uint32_t n, uint32_t k) {
  __shared__ __align__(16) float as[kTileK][kAStride];  // as[p][i] = A[row0 + i, k0 + p]
  __shared__ __align__(16) float bs[kTileK][kTile];     // bs[p][j] = B[k0 + p, col0 + j]

  const int t = threadIdx.x;
  const int tx = t % kThreadsPerRow;
  const int ty = t / kThreadsPerRow;
  const uint32_t row0 = blockIdx.y * kTile;
  const uint32_t col0 = blockIdx.x * kTile;

  float acc[kMicro][kMicro];
#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
#pragma unroll
    for (int j = 0; j < kMicro; ++j) acc[i][j] = 0.0f;
  }

  Staged staged;
  if (k > 0) LoadTiles(a, b, m, n, k, row0, col0, 0, staged);
  for (uint32_t k0 = 0; k0 < k; k0 += kTileK) {
#pragma unroll
    for (int l = 0; l < kALoads; ++l)
      as[t % kTileK][t / kTileK + l * (kThreads / kTileK)] = staged.a[l];
#pragma unroll
    for (int l = 0; l < kBLoads; ++l)
      bs[t / kTile + l * (kThreads / kTile)][t % kTile] = staged.b[l];
    __syncthreads();
    // Prefetch the next step while this one is consumed (its loads overlap the FMAs below).
    if (k0 + kTileK < k) LoadTiles(a, b, m, n, k, row0, col0, k0 + kTileK, staged);
    const uint32_t valid = k - k0;  // > 0
    if (valid >= static_cast<uint32_t>(kTileK)) {
#pragma unroll
      for (int p = 0; p < kTileK; ++p) Step(as, bs, p, tx, ty, acc);
    } else {
      // The last, partial step: only the valid terms, in order (see the file comment).
      for (int p = 0; p < static_cast<int>(valid); ++p) Step(as, bs, p, tx, ty, acc);
    }
    __syncthreads();  // everyone is done reading as/bs before the next step overwrites them
  }

#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
    const uint32_t row = row0 + ty * kMicro + i;
    if (row >= m) break;
#pragma unroll
    for (int j = 0; j < kMicro; ++j) {
      const uint32_t col = col0 + tx * kMicro + j;
      if (col < n) c[static_cast<uint64_t>(row) * n + col] = acc[i][j];
    }
  }
}

namespace vmm::kernels {

static_assert(detail::ParamCount(&vmm_matmul_f32) == kMatmulParamCount);

int LaunchMatmul(const float* a, const float* b, float* c, uint32_t m, uint32_t n, uint32_t k,
                 CUstream_st* stream) {
  if (m == 0 || n == 0) return static_cast<int>(cudaErrorInvalidValue);
  void* args[] = {&a, &b, &c, &m, &n, &k};
  return detail::Launch(MatmulKernelSymbol(), MatmulLaunch(m, n), args, stream);
}

const void* MatmulKernelSymbol() { return reinterpret_cast<const void*>(&vmm_matmul_f32); }

}  // namespace vmm::kernels
