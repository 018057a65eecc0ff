// Independent verification of C = A·B on the host, in fp64.
//
// Every element of C is held to the rigorous forward-error bound of fp32 dot products computed with
// fused multiply-adds in any order (Higham, "Accuracy and Stability of Numerical Algorithms",
// §3.1):
//   |c_ij - (A·B)_ij| <= gamma_k * sum_p |a_ip| |b_pj|,   gamma_k = k u / (1 - k u), u = 2^-24,
// plus the (2^29 times smaller) error of the fp64 reference itself. An element outside the bound is
// a wrong result, not rounding noise.
//
// Small products (m*n*k <= kFullReferenceLimit) are recomputed in full. Larger ones use Freivalds'
// check per row with two random ±1 vectors (O(n^2)); every row that fails is recomputed in full so
// the report still lists exact {index, want, got} for the bad elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/report/report.h"

namespace vmm {

inline constexpr uint64_t kFullReferenceLimit = 1ull << 30;

struct MatmulVerification {
  std::string method;                   // "fp64 reference" or "freivalds"
  uint64_t elements = 0;                // elements of C covered
  uint64_t mismatches = 0;              // elements outside the bound
  std::vector<report::Mismatch> first;  // the first few, ascending index
  double max_error_ratio = 0;           // max over checked elements of |c - ref| / bound
};

// a: m x k, b: k x n, c: m x n, row-major fp32. Keeps at most `max_report` mismatches. Products
// with m*n*k above `full_reference_limit` use Freivalds' check.
MatmulVerification VerifyMatmul(const float* a, const float* b, const float* c, uint32_t m,
                                uint32_t n, uint32_t k, size_t max_report,
                                uint64_t full_reference_limit = kFullReferenceLimit);

}  // namespace vmm
