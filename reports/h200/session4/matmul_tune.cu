// Experiment (not committed): variants of vmm_matmul_f32 against cuBLAS sgemm, same run.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

constexpr int kTile = 128, kThreads = 256, kHalf = 64, kAStride = kTile + 4, kMicro = 8;

template <int KT>
struct Staged { float4 a[KT / 8]; float4 b[KT / 8]; };

template <int KT>
__device__ __forceinline__ void LoadTiles(const float* __restrict__ a, const float* __restrict__ b,
    uint32_t m, uint32_t n, uint32_t k, uint32_t row0, uint32_t col0, uint32_t k0, Staged<KT>& s) {
  const int t = threadIdx.x;
  const float4 zero = make_float4(0, 0, 0, 0);
#pragma unroll
  for (int r = 0; r < KT / 8; ++r) {
    const int idx = t + r * kThreads;
    const uint32_t ar = row0 + idx / (KT / 4), ak = k0 + (idx % (KT / 4)) * 4;
    const uint32_t bp = k0 + idx / 32, bc = col0 + (idx % 32) * 4;
    s.a[r] = (ar < m && ak < k) ? __ldg(reinterpret_cast<const float4*>(a + (uint64_t)ar * k + ak)) : zero;
    s.b[r] = (bp < k && bc < n) ? __ldg(reinterpret_cast<const float4*>(b + (uint64_t)bp * n + bc)) : zero;
  }
}
template <int KT>
__device__ __forceinline__ void StoreTiles(const Staged<KT>& s, float (*as)[kAStride], float (*bs)[kTile]) {
  const int t = threadIdx.x;
#pragma unroll
  for (int r = 0; r < KT / 8; ++r) {
    const int idx = t + r * kThreads;
    const int ar = idx / (KT / 4), ak = (idx % (KT / 4)) * 4;
    as[ak + 0][ar] = s.a[r].x; as[ak + 1][ar] = s.a[r].y; as[ak + 2][ar] = s.a[r].z; as[ak + 3][ar] = s.a[r].w;
    *reinterpret_cast<float4*>(&bs[idx / 32][(idx % 32) * 4]) = s.b[r];
  }
}
__device__ __forceinline__ void Step(const float (*as)[kAStride], const float (*bs)[kTile], int p,
                                     int tx, int ty, float (&acc)[kMicro][kMicro]) {
  const float4 a0 = *reinterpret_cast<const float4*>(&as[p][ty * 4]);
  const float4 a1 = *reinterpret_cast<const float4*>(&as[p][kHalf + ty * 4]);
  const float4 b0 = *reinterpret_cast<const float4*>(&bs[p][tx * 4]);
  const float4 b1 = *reinterpret_cast<const float4*>(&bs[p][kHalf + tx * 4]);
  const float ar[kMicro] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
  const float br[kMicro] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
  for (int i = 0; i < kMicro; ++i)
#pragma unroll
    for (int j = 0; j < kMicro; ++j) acc[i][j] = __fmaf_rn(ar[i], br[j], acc[i][j]);
}
__device__ __forceinline__ int Local(int i, int l) { return (i < 4 ? 0 : kHalf) + l * 4 + (i & 3); }

// LAYOUT 0: tx = t%16, ty = t/16. LAYOUT 1: warp owns a 32x64 (4 rows of 8 threads x 8 cols of 4)... simple: tx=(t%32)%8 + 8*((t/32)%2)? keep 0.
template <int KT, int SWZ, int MINB>
__global__ void __launch_bounds__(kThreads, MINB)
    mm(const float* a, const float* b, float* c, uint32_t m, uint32_t n, uint32_t k) {
  __shared__ __align__(16) float as[2][KT][kAStride];
  __shared__ __align__(16) float bs[2][KT][kTile];
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  uint32_t bx = blockIdx.x, by = blockIdx.y;
  if (SWZ > 0) {
    const uint32_t bid = blockIdx.y * gridDim.x + blockIdx.x;
    const uint32_t per = SWZ * gridDim.x, g = bid / per, first = g * SWZ;
    const uint32_t rows = min(gridDim.y - first, (uint32_t)SWZ);
    by = first + (bid % per) % rows;
    bx = (bid % per) / rows;
  }
  const uint32_t row0 = by * kTile, col0 = bx * kTile;
  float acc[kMicro][kMicro];
#pragma unroll
  for (int i = 0; i < kMicro; ++i)
#pragma unroll
    for (int j = 0; j < kMicro; ++j) acc[i][j] = 0.0f;
  Staged<KT> st;
  if (k > 0) { LoadTiles<KT>(a, b, m, n, k, row0, col0, 0, st); StoreTiles<KT>(st, as[0], bs[0]); }
  __syncthreads();
  int stage = 0;
  for (uint32_t k0 = 0; k0 < k; k0 += KT) {
    const bool more = k0 + KT < k;
    if (more) LoadTiles<KT>(a, b, m, n, k, row0, col0, k0 + KT, st);
    const uint32_t valid = k - k0;
    if (valid >= (uint32_t)KT) {
#pragma unroll
      for (int p = 0; p < KT; ++p) Step(as[stage], bs[stage], p, tx, ty, acc);
    } else {
      for (int p = 0; p < (int)valid; ++p) Step(as[stage], bs[stage], p, tx, ty, acc);
    }
    if (more) StoreTiles<KT>(st, as[stage ^ 1], bs[stage ^ 1]);
    __syncthreads();
    stage ^= 1;
  }
#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
    const uint32_t row = row0 + Local(i, ty);
    if (row >= m) continue;
    float* crow = c + (uint64_t)row * n;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t col = col0 + Local(h * 4, tx);
      const float* v = &acc[i][h * 4];
      if (col + 3 < n) *reinterpret_cast<float4*>(crow + col) = make_float4(v[0], v[1], v[2], v[3]);
    }
  }
}

__global__ void init(float* p, uint64_t count, uint32_t seed) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < count; i += (uint64_t)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995; x ^= x >> 15;
    p[i] = (x & 0xffff) / 65536.0f - 0.5f;
  }
}

using Fn = void (*)(const float*, const float*, float*, uint32_t, uint32_t, uint32_t);
struct V { const char* name; Fn fn; };

template <class F> float Median(F f, int runs) {
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ms;
  f(); cudaDeviceSynchronize();
  for (int r = 0; r < runs; ++r) { cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float x; cudaEventElapsedTime(&x, e0, e1); ms.push_back(x); }
  std::sort(ms.begin(), ms.end()); return ms[ms.size() / 2];
}

int main() {
  V vs[] = {{"k8 (today)", mm<8, 0, 2>}, {"k8 swz8", mm<8, 8, 2>}, {"k16", mm<16, 0, 2>},
            {"k16 swz8", mm<16, 8, 2>}, {"k16 swz16", mm<16, 16, 2>}, {"k8 swz16", mm<8, 16, 2>},
            {"k16 minb1", mm<16, 8, 1>}};
  cublasHandle_t h; cublasCreate(&h);
  for (uint32_t s : {4096u, 8192u}) {
    const uint64_t cnt = (uint64_t)s * s;
    float *A, *B, *C, *R; cudaMalloc(&A, cnt * 4); cudaMalloc(&B, cnt * 4); cudaMalloc(&C, cnt * 4); cudaMalloc(&R, cnt * 4);
    init<<<1024, 256>>>(A, cnt, 1); init<<<1024, 256>>>(B, cnt, 2);
    const int runs = s == 4096 ? 30 : 10;
    const float one = 1, zero = 0;
    float cub = Median([&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, B, s, A, s, &zero, C, s); }, runs);
    printf("%u^2 cublas sgemm %.3f ms (%.1f TFLOP/s)\n", s, cub, 2.0 * s * s * s / (cub * 1e9));
    dim3 grid(s / 128, s / 128);
    vs[0].fn<<<grid, 256>>>(A, B, R, s, s, s); cudaDeviceSynchronize();
    std::vector<uint32_t> ref(cnt), got(cnt);
    cudaMemcpy(ref.data(), R, cnt * 4, cudaMemcpyDeviceToHost);
    for (const V& v : vs) {
      cudaMemset(C, 0, cnt * 4);
      float ms = Median([&] { v.fn<<<grid, 256>>>(A, B, C, s, s, s); }, runs);
      cudaMemcpy(got.data(), C, cnt * 4, cudaMemcpyDeviceToHost);
      const bool same = memcmp(got.data(), ref.data(), cnt * 4) == 0;
      printf("%u^2 %-12s %.3f ms (%.1f TFLOP/s) %.3fx cublas, bit-identical to today: %s  err=%s\n", s, v.name, ms,
             2.0 * s * s * s / (ms * 1e9), cub / ms, same ? "yes" : "NO", cudaGetErrorString(cudaGetLastError()));
    }
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(R);
  }
}
