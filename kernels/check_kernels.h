// Host entry points of the data-check kernels (compare.cu, pick_chunks.cu, matmul_check.cu).
// Plain C++, like kernels.h: every Launch* enqueues on `stream` and returns the launch's
// cudaError_t as an int, without synchronizing.
//
// Every check is a streaming pass over fixed chunks followed by a short tail that names the first
// mismatches, so only a few hundred bytes ever come back to the host:
//   1. A count pass (LaunchCompareCount, LaunchValueCount, LaunchMatmulRefCount) writes the number
//      of mismatches of every chunk to chunk_counts[] (device memory, one uint32 per chunk) and
//      adds into one ScanTotals (device memory, zeroed by the caller first): the total, the first
//      chunk that has a mismatch, and the pass's hashes or error ratio.
//   2. LaunchPickChunks (one block) reads chunk_counts[] from that first chunk on and writes the
//      chunks that hold the first max_report mismatches, each with the output position of its first
//      mismatch (the number of mismatches in all earlier chunks).
//   3. A collect pass (LaunchCompareCollect, LaunchValueCollect, LaunchMatmulCollect) re-reads
//      only the picked chunks and writes the mismatches at their positions < max_report, so the
//      report holds the first mismatches in ascending index order.
// The three launches need no host round trip between them: a pass with nothing to do (no
// mismatch) exits at once.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;  // = cudaStream_t

namespace vmm::kernels {

inline constexpr uint32_t kMaxCheckReport = 64;  // the most mismatches a check names

// Zeroed (cudaMemsetAsync) before a count pass; all fields wrap or saturate, never overflow.
struct ScanTotals {
  unsigned long long mismatches;       // over all chunks
  unsigned long long first_chunk_inv;  // ~(the first chunk with a mismatch); 0 = none
  unsigned long long hash;            // compare/value: datagen hash of the checked words (if asked)
  unsigned long long delta;           // compare: sum over mismatches of HashWord(b) - HashWord(a)
  unsigned long long max_ratio_bits;  // matmul: bits of the largest error ratio (a double >= 0)
};

struct PickedChunk {
  uint64_t chunk;  // chunk number
  uint64_t base;   // output position of the chunk's first mismatch
};
struct PickedChunks {
  uint32_t count;  // picked chunks, <= kMaxCheckReport
  uint32_t reserved;
  PickedChunk chunk[kMaxCheckReport];
};

// The first mismatches of a word check: index (with the pass's index_base added), the reference
// word (want) and the checked word (got).
struct WordReport {
  uint64_t index[kMaxCheckReport];
  uint32_t want[kMaxCheckReport];
  uint32_t got[kMaxCheckReport];
};

// The first mismatches of a matmul check: index into C, the fp64 reference and C's value.
struct MatmulReport {
  uint64_t index[kMaxCheckReport];
  double want[kMaxCheckReport];
  float got[kMaxCheckReport];
};

// What one check leaves in device memory and reads back in one copy (the CUDA engine's check
// scratch): the totals and bad_rows are zeroed before the passes (kCheckZeroedBytes).
struct CheckState {
  ScanTotals totals;
  unsigned long long bad_rows;  // check_matmul: rows Freivalds' check rejected
  PickedChunks picked;
  union {
    WordReport words;
    MatmulReport matmul;
  } report;
};
inline constexpr size_t kCheckZeroedBytes = offsetof(CheckState, picked);

// --- Word checks: a[i] against b[i] (compare) or against one pattern (value) ---
// Chunks of kWordChunk words; reported indices and hashes use index_base + i, so a check may run
// in pieces. a and b must be 4-byte aligned; when both are 16-byte aligned the pass reads 16 bytes
// per load. `blocks` is the count pass's grid (a few per SM; 0 picks a default).
inline constexpr uint32_t kWordChunk = 4096;
uint64_t WordChunkCount(uint64_t count);
// hash_a: also add the datagen hash of a into totals->hash. delta is always accumulated.
int LaunchCompareCount(const uint32_t* a, const uint32_t* b, uint64_t count, uint64_t index_base,
                       bool hash_a, uint32_t* chunk_counts, ScanTotals* totals, uint32_t blocks,
                       CUstream_st* stream);
int LaunchCompareCollect(const uint32_t* a, const uint32_t* b, uint64_t count, uint64_t index_base,
                         const PickedChunks* picked, uint32_t max_report, WordReport* report,
                         CUstream_st* stream);
// Always hashes a into totals->hash.
int LaunchValueCount(const uint32_t* a, uint32_t pattern, uint64_t count, uint64_t index_base,
                     uint32_t* chunk_counts, ScanTotals* totals, uint32_t blocks,
                     CUstream_st* stream);
int LaunchValueCollect(const uint32_t* a, uint32_t pattern, uint64_t count, uint64_t index_base,
                       const PickedChunks* picked, uint32_t max_report, WordReport* report,
                       CUstream_st* stream);

// --- Step 2, shared by every check ---
int LaunchPickChunks(const uint32_t* chunk_counts, uint64_t num_chunks, const ScanTotals* totals,
                     uint32_t max_report, PickedChunks* picked, CUstream_st* stream);

// --- Matmul check (kernels/matmul_bound.h has the arithmetic) ---
// Chunks are kMatmulSegment consecutive elements of one row of C: chunk = row * segments + s,
// segments = ceil(n / kMatmulSegment), so chunk order is index order.
inline constexpr uint32_t kMatmulSegment = 256;
uint64_t MatmulChunkCount(uint32_t m, uint32_t n);
// Recomputes every element of the rows with row_bad[row] != 0 (every row when row_bad is null) in
// fp64 and counts those outside the bound; the largest ratio goes to totals->max_ratio_bits.
int LaunchMatmulRefCount(const float* a, const float* b, const float* c, uint32_t m, uint32_t n,
                         uint32_t k, double factor, const uint8_t* row_bad, uint32_t* chunk_counts,
                         ScanTotals* totals, uint32_t blocks, CUstream_st* stream);
int LaunchMatmulCollect(const float* a, const float* b, const float* c, uint32_t n, uint32_t k,
                        double factor, const PickedChunks* picked, uint32_t max_report,
                        MatmulReport* report, CUstream_st* stream);
// Freivalds' check with the two ±1 vectors of matmul_bound::kFreivaldsSeed0/1, in three launches:
// the vectors (r: 2 n doubles), B r and sum_j |b_pj| per row p of B (br: 2 k, babs: k doubles),
// then per row i of C whether |C r - A (B r)| exceeds the bound for either vector (row_bad: m
// bytes, 1 = failed) and how many rows failed (*bad_rows, device; zeroed by the caller first).
int LaunchFreivalds(const float* a, const float* b, const float* c, uint32_t m, uint32_t n,
                    uint32_t k, double factor, double* r, double* br, double* babs,
                    uint8_t* row_bad, unsigned long long* bad_rows, uint32_t blocks,
                    CUstream_st* stream);

}  // namespace vmm::kernels
