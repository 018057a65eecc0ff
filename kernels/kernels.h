// Host entry points of the CUDA kernels. Plain C++: no CUDA header is needed to include this file,
// so the engine and the benches compile as ordinary C++ and only kernels/*.cu go through nvcc.
//
// Every Launch* function enqueues its kernel(s) on `stream` (a cudaStream_t; nullptr is the legacy
// default stream) and returns at once, without synchronizing. The return value is the cudaError_t
// of the launch as an int (0 = cudaSuccess); errors raised while the kernel runs surface at the
// next synchronization, as usual in CUDA. All pointers are device addresses that must stay mapped
// and accessible until the work has finished. While `stream` is capturing, the launches are
// recorded into the graph instead of running (Checksum also enqueues a memset).
//
// Geometry comes from launch_config.h (MatmulLaunch, FillLaunch), so the host backend can record
// identical kernel nodes.
#pragma once

#include <cstdint>

#include "kernels/launch_config.h"

struct CUstream_st;  // = cudaStream_t

namespace vmm::kernels {

// C[m x n] = A[m x k] * B[k x n], row-major fp32; each element is accumulated with
// acc = fmaf(A[i,p], B[p,j], acc) for p = 0..k-1 in order from 0.0f, bit-identical to the
// host backend. Returns cudaErrorInvalidValue when m or n is 0 (nothing to launch); k = 0 writes
// zeros. C must not overlap A or B.
int LaunchMatmul(const float* a, const float* b, float* c, uint32_t m, uint32_t n, uint32_t k,
                 CUstream_st* stream);

// dst[i] = datagen::FillValue(seed, i) for i < count (grid-stride, any count including 0).
int LaunchFill(float* dst, uint64_t count, uint64_t seed, CUstream_st* stream);

// In-flight work of a known length for isolate blocks' races (one block; BusyLaunch), over
// dst[0, count) for `duration_ns` of the GPU's global timer, as `touch` says (BusyTouch):
// spin then set every word to pattern, read every word pass after pass, or write pattern pass
// after pass. With `flag` (host memory the device can read; null: none) it also stops at the end
// of the pass in which it sees *flag nonzero; one that stops at its duration without seeing it
// sets *expired to 1 (the host's sign that it set the flag too late).
int LaunchBusy(uint32_t* dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
               BusyTouch touch, const uint32_t* flag, uint32_t* expired, CUstream_st* stream);

// *hash (device memory, 8 bytes) = wrapping sum over i < count of datagen::HashWord(src[i], i).
// Zeroes *hash first (a memset on the same stream), then accumulates with 64-bit atomics: the sum
// is order-independent, so the result is deterministic.
int LaunchChecksum(const uint32_t* src, uint64_t count, uint64_t* hash, CUstream_st* stream);
// dst[i] = src[i] for i < count, and *hash as LaunchChecksum over src, in one pass (the snapshot to
// device memory). dst must not overlap src.
int LaunchCopyChecksum(const uint32_t* src, uint32_t* dst, uint64_t count, uint64_t* hash,
                       CUstream_st* stream);

// Conditional nodes (condition.cu); only while `stream` is capturing, into a graph that holds the
// conditional node of `handle` (a cudaGraphConditionalHandle). LaunchSetCondition: a kernel that
// sets the condition to (*word != 0). LaunchNextPass: a kernel that subtracts one from *counter
// (not below 0), adds one to *passes (when not null) and sets the condition to (*counter != 0).
int LaunchSetCondition(const uint32_t* word, uint64_t handle, CUstream_st* stream);
int LaunchNextPass(uint32_t* counter, uint32_t* passes, uint64_t handle, CUstream_st* stream);

// The data-check kernels (compare, value, matmul check) are declared in check_kernels.h.

// The kernels that appear in captured graphs are declared, with their rows, in graph_kernels.h.

}  // namespace vmm::kernels
