// Verification of C = A·B on the host CPU, in fp64: the independent oracle. The host backend's
// CheckMatmul runs it in place on its memory; `check_matmul` with `verify: host` runs it on copies
// read back from any backend; the device check (kernels/matmul_check.cu) must agree with it.
//
// The bound and the arithmetic are kernels/matmul_bound.h (shared with the device). Small
// products (m*n*k <= full_reference_limit) are recomputed element by element. Larger ones use
// Freivalds' check per row with two random ±1 vectors (O(n^2)); every row that fails is
// recomputed in full, so the result still lists exact {index, want, got} for the bad elements and
// max_error_ratio covers those rows only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/matmul_bound.h"
#include "runner/engine/data_plane.h"

namespace vmm {

using matmul_bound::kFullReferenceLimit;

// a: m x k, b: k x n, c: m x n, row-major fp32. Keeps at most `max_report` mismatches.
MatmulCheckResult VerifyMatmul(const float* a, const float* b, const float* c, uint32_t m,
                               uint32_t n, uint32_t k, size_t max_report,
                               uint64_t full_reference_limit = kFullReferenceLimit);

}  // namespace vmm
