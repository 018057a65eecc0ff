// check_matmul on the device: every element of C (or of the rows Freivalds' check rejects)
// against an fp64 reference with the rigorous bound of kernels/matmul_bound.h, in the three steps
// of check_kernels.h, and Freivalds' check itself.
//
// The reference of element (i, j) is computed by one thread as the host oracle computes it:
// p = 0..k-1 in order, each product rounded once to fp64 and added (no FMA: matmul_bound.h's
// Mul/Add), so the reference, the verdict, the ratio and the reported `want` are the host's bit
// for bit. Freivalds' sums are block reductions (another order than the host's loops; the bound's
// relative slack covers that).
#include <cstdint>

#include "kernels/check_kernels.h"
#include "kernels/launch.cuh"
#include "kernels/matmul_bound.h"
#include "kernels/reduce.cuh"

namespace {

namespace mb = vmm::matmul_bound;
using vmm::kernels::kMatmulSegment;
using vmm::kernels::MatmulReport;
using vmm::kernels::PickedChunk;
using vmm::kernels::PickedChunks;
using vmm::kernels::ScanTotals;
using vmm::kernels::detail::kBlockThreads;
static_assert(kMatmulSegment == kBlockThreads, "one thread per element of a chunk");

__device__ __forceinline__ void Reference(const float* __restrict__ a, const float* __restrict__ b,
                                          uint32_t i, uint32_t j, uint32_t n, uint32_t k,
                                          double& ref, double& mag) {
  ref = 0.0;
  mag = 0.0;
  const float* arow = a + static_cast<uint64_t>(i) * k;
  for (uint32_t p = 0; p < k; ++p)
    mb::AccumulateTerm(__ldg(arow + p), __ldg(b + static_cast<uint64_t>(p) * n + j), ref, mag);
}

// Step 1: one block per chunk (a segment of one row), grid-stride over chunks.
__global__ void __launch_bounds__(kBlockThreads)
    vmm_matmul_ref_count(const float* __restrict__ a, const float* __restrict__ b,
                         const float* __restrict__ c, uint32_t m, uint32_t n, uint32_t k,
                         double factor, const uint8_t* __restrict__ row_bad,
                         uint32_t* __restrict__ chunk_counts, ScanTotals* totals) {
  __shared__ unsigned long long warp_max[vmm::kernels::detail::kWarps];
  const uint32_t segments = (n + kMatmulSegment - 1) / kMatmulSegment;
  const uint64_t num_chunks = static_cast<uint64_t>(m) * segments;
  uint64_t block_total = 0, first = ~0ull;  // thread 0's
  double max_ratio = 0;                     // this thread's
  for (uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    const uint32_t i = static_cast<uint32_t>(chunk / segments);
    if (row_bad != nullptr && row_bad[i] == 0) {  // the whole block: a row that passed
      if (threadIdx.x == 0) chunk_counts[chunk] = 0;
      continue;
    }
    const uint32_t j = static_cast<uint32_t>(chunk % segments) * kMatmulSegment + threadIdx.x;
    bool bad = false;
    if (j < n) {
      double ref, mag;
      Reference(a, b, i, j, n, k, ref, mag);
      const mb::ElementVerdict v =
          mb::JudgeElement(c[static_cast<uint64_t>(i) * n + j], ref, mag, factor);
      bad = v.bad;
      if (v.ratio > max_ratio) max_ratio = v.ratio;  // a NaN ratio is never larger (as on the host)
    }
    const int in_chunk = __syncthreads_count(bad);
    if (threadIdx.x == 0) {
      chunk_counts[chunk] = static_cast<uint32_t>(in_chunk);
      if (in_chunk != 0) {
        block_total += static_cast<uint64_t>(in_chunk);
        if (chunk < first) first = chunk;
      }
    }
  }
  // Ratios are >= 0, so their bits order as the doubles do.
  const unsigned long long bits = vmm::kernels::detail::WarpMax(
      static_cast<unsigned long long>(__double_as_longlong(max_ratio)));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = bits;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long block_max = 0;
    for (int w = 0; w < vmm::kernels::detail::kWarps; ++w)
      block_max = warp_max[w] > block_max ? warp_max[w] : block_max;
    if (block_max != 0) atomicMax(&totals->max_ratio_bits, block_max);
    if (block_total != 0) {
      atomicAdd(&totals->mismatches, static_cast<unsigned long long>(block_total));
      atomicMax(&totals->first_chunk_inv, ~static_cast<unsigned long long>(first));
    }
  }
}

// Step 3: one block per picked chunk; thread t is column segment * 256 + t, so the block scan of
// the bad flags gives each bad element its output position.
__global__ void __launch_bounds__(kBlockThreads)
    vmm_matmul_collect(const float* __restrict__ a, const float* __restrict__ b,
                       const float* __restrict__ c, uint32_t n, uint32_t k, double factor,
                       const PickedChunks* picked, uint32_t max_report, MatmulReport* report) {
  __shared__ uint32_t warp_sums[vmm::kernels::detail::kWarps];
  if (blockIdx.x >= picked->count) return;  // the whole block
  const PickedChunk chunk = picked->chunk[blockIdx.x];
  const uint32_t segments = (n + kMatmulSegment - 1) / kMatmulSegment;
  const uint32_t i = static_cast<uint32_t>(chunk.chunk / segments);
  const uint32_t j = static_cast<uint32_t>(chunk.chunk % segments) * kMatmulSegment + threadIdx.x;
  bool bad = false;
  double ref = 0;
  float got = 0;
  if (j < n) {
    double mag;
    Reference(a, b, i, j, n, k, ref, mag);
    got = c[static_cast<uint64_t>(i) * n + j];
    bad = mb::JudgeElement(got, ref, mag, factor).bad;
  }
  const uint64_t pos =
      chunk.base + vmm::kernels::detail::BlockExclusiveScan(bad ? 1u : 0u, warp_sums);
  if (bad && pos < max_report) {
    report->index[pos] = static_cast<uint64_t>(i) * n + j;
    report->want[pos] = ref;
    report->got[pos] = got;
  }
}

// Freivalds 1: the two ±1 vectors, r[s * n + j].
__global__ void vmm_freivalds_signs(uint32_t n, double* r) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
    r[j] = mb::FreivaldsSign(mb::kFreivaldsSeed0, j);
    r[n + j] = mb::FreivaldsSign(mb::kFreivaldsSeed1, j);
  }
}

// Freivalds 2: per row p of B, br[s * k + p] = sum_j b_pj r_s[j] and babs[p] = sum_j |b_pj|.
__global__ void __launch_bounds__(kBlockThreads)
    vmm_freivalds_b(const float* __restrict__ b, uint32_t n, uint32_t k,
                    const double* __restrict__ r, double* br, double* babs) {
  __shared__ double sums[3][vmm::kernels::detail::kWarps];
  for (uint32_t p = blockIdx.x; p < k; p += gridDim.x) {
    const float* row = b + static_cast<uint64_t>(p) * n;
    double x0 = 0, x1 = 0, x2 = 0;
    for (uint32_t j = threadIdx.x; j < n; j += kBlockThreads) {
      const double v = row[j];
      x0 += v * r[j];
      x1 += v * r[n + j];
      x2 += fabs(v);
    }
    x0 = vmm::kernels::detail::BlockSum(x0, sums[0]);
    x1 = vmm::kernels::detail::BlockSum(x1, sums[1]);
    x2 = vmm::kernels::detail::BlockSum(x2, sums[2]);
    if (threadIdx.x == 0) {
      br[p] = x0;
      br[k + p] = x1;
      babs[p] = x2;
    }
    __syncthreads();  // thread 0 has read the sums before the next row writes them
  }
}

// Freivalds 3: per row i, whether |sum_j c_ij r_s[j] - sum_p a_ip br_s[p]| exceeds the bound for
// either vector; such rows are marked in row_bad and counted.
__global__ void __launch_bounds__(kBlockThreads)
    vmm_freivalds_rows(const float* __restrict__ a, const float* __restrict__ c, uint32_t m,
                       uint32_t n, uint32_t k, const double* __restrict__ r,
                       const double* __restrict__ br, const double* __restrict__ babs,
                       double factor, uint8_t* row_bad, unsigned long long* bad_rows) {
  __shared__ double sums[5][vmm::kernels::detail::kWarps];
  for (uint32_t i = blockIdx.x; i < m; i += gridDim.x) {
    const float* arow = a + static_cast<uint64_t>(i) * k;
    const float* crow = c + static_cast<uint64_t>(i) * n;
    double abr0 = 0, abr1 = 0, bound_sum = 0, cr0 = 0, cr1 = 0;
    for (uint32_t p = threadIdx.x; p < k; p += kBlockThreads) {
      const double x = arow[p];
      abr0 += x * br[p];
      abr1 += x * br[k + p];
      bound_sum += fabs(x) * babs[p];
    }
    for (uint32_t j = threadIdx.x; j < n; j += kBlockThreads) {
      const double x = crow[j];
      cr0 += x * r[j];
      cr1 += x * r[n + j];
    }
    abr0 = vmm::kernels::detail::BlockSum(abr0, sums[0]);
    abr1 = vmm::kernels::detail::BlockSum(abr1, sums[1]);
    bound_sum = vmm::kernels::detail::BlockSum(bound_sum, sums[2]);
    cr0 = vmm::kernels::detail::BlockSum(cr0, sums[3]);
    cr1 = vmm::kernels::detail::BlockSum(cr1, sums[4]);
    if (threadIdx.x == 0) {
      const double bound = mb::FreivaldsRowBound(factor, bound_sum, n);
      const bool bad =
          mb::FreivaldsRowFails(cr0, abr0, bound) || mb::FreivaldsRowFails(cr1, abr1, bound);
      row_bad[i] = bad ? 1 : 0;
      if (bad) atomicAdd(bad_rows, 1ull);
    }
    __syncthreads();
  }
}

uint32_t Blocks(uint64_t work, uint32_t blocks) {
  const uint64_t cap = blocks != 0 ? blocks : 1024;
  return static_cast<uint32_t>(work == 0 ? 1 : (work < cap ? work : cap));
}

}  // namespace

namespace vmm::kernels {

uint64_t MatmulChunkCount(uint32_t m, uint32_t n) {
  return static_cast<uint64_t>(m) * ((n + kMatmulSegment - 1) / kMatmulSegment);
}

int LaunchMatmulRefCount(const float* a, const float* b, const float* c, uint32_t m, uint32_t n,
                         uint32_t k, double factor, const uint8_t* row_bad, uint32_t* chunk_counts,
                         ScanTotals* totals, uint32_t blocks, CUstream_st* stream) {
  if (m == 0 || n == 0) return static_cast<int>(cudaSuccess);
  LaunchConfig cfg;
  cfg.grid = {Blocks(MatmulChunkCount(m, n), blocks), 1, 1};
  cfg.block = {kBlockThreads, 1, 1};
  void* args[] = {&a, &b, &c, &m, &n, &k, &factor, &row_bad, &chunk_counts, &totals};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_matmul_ref_count), cfg, args, stream);
}

int LaunchMatmulCollect(const float* a, const float* b, const float* c, uint32_t n, uint32_t k,
                        double factor, const PickedChunks* picked, uint32_t max_report,
                        MatmulReport* report, CUstream_st* stream) {
  if (max_report > kMaxCheckReport) max_report = kMaxCheckReport;
  if (max_report == 0 || n == 0) return static_cast<int>(cudaSuccess);
  LaunchConfig cfg;
  cfg.grid = {max_report, 1, 1};
  cfg.block = {kBlockThreads, 1, 1};
  void* args[] = {&a, &b, &c, &n, &k, &factor, &picked, &max_report, &report};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_matmul_collect), cfg, args, stream);
}

int LaunchFreivalds(const float* a, const float* b, const float* c, uint32_t m, uint32_t n,
                    uint32_t k, double factor, double* r, double* br, double* babs,
                    uint8_t* row_bad, unsigned long long* bad_rows, uint32_t blocks,
                    CUstream_st* stream) {
  if (m == 0 || n == 0) return static_cast<int>(cudaSuccess);
  LaunchConfig cfg;
  cfg.grid = {Blocks((n + kBlockThreads - 1) / kBlockThreads, blocks), 1, 1};
  cfg.block = {kBlockThreads, 1, 1};
  void* sign_args[] = {&n, &r};
  int err =
      detail::Launch(reinterpret_cast<const void*>(&vmm_freivalds_signs), cfg, sign_args, stream);
  if (err != 0) return err;
  if (k > 0) {
    cfg.grid = {Blocks(k, blocks), 1, 1};
    void* b_args[] = {&b, &n, &k, &r, &br, &babs};
    err = detail::Launch(reinterpret_cast<const void*>(&vmm_freivalds_b), cfg, b_args, stream);
    if (err != 0) return err;
  }
  cfg.grid = {Blocks(m, blocks), 1, 1};
  void* row_args[] = {&a, &c, &m, &n, &k, &r, &br, &babs, &factor, &row_bad, &bad_rows};
  return detail::Launch(reinterpret_cast<const void*>(&vmm_freivalds_rows), cfg, row_args, stream);
}

}  // namespace vmm::kernels
