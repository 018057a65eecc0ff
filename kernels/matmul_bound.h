// The arithmetic of the matmul verification, shared bit for bit by the host oracle
// (runner/engine/matmul_verify.cc, g++) and the device check (kernels/matmul_check.cu, nvcc).
//
// Every element of C is held to the rigorous forward-error bound of fp32 dot products computed
// with fused multiply-adds in any order (Higham, "Accuracy and Stability of Numerical Algorithms",
// §3.1):
//   |c_ij - (A·B)_ij| <= gamma_k * sum_p |a_ip| |b_pj|,   gamma_k = k u / (1 - k u), u = 2^-24,
// plus the (2^29 times smaller) error of the fp64 reference itself, plus kUnderflowSlack. An
// element outside the bound is a wrong result, not rounding noise.
//
// Bit-exactness between host and device: the fp64 operations below are written with Mul/Add/
// Sub/Div, which are __dmul_rn/__dadd_rn/... on the device (never contracted into an FMA) and
// plain operators on the host (whose files are compiled with -ffp-contract=off). A full
// reference is therefore the same double on both, and so are the verdict, the ratio and the
// reported `want`. Freivalds' sums are reductions whose order differs; their bound carries a
// relative slack of 1e-9 for that rounding (many orders of magnitude above it).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/datagen.h"

namespace vmm::matmul_bound {

// Products with m*n*k up to this are compared element by element with a full fp64 reference;
// larger ones use Freivalds' check (two random ±1 vectors), then recompute the rows that fail.
inline constexpr uint64_t kFullReferenceLimit = 1ull << 30;
inline constexpr double kUnderflowSlack = 1e-37;  // below fp32's smallest normal
inline constexpr double kFreivaldsRelativeSlack = 1e-9;
inline constexpr uint64_t kFreivaldsSeed0 = 0x243f6a8885a308d3ull;
inline constexpr uint64_t kFreivaldsSeed1 = 0x13198a2e03707344ull;

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ double Mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double Add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double Sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double Div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double Abs(double a) { return fabs(a); }
__device__ __forceinline__ bool IsNan(double a) { return isnan(a); }
#else
inline double Mul(double a, double b) { return a * b; }
inline double Add(double a, double b) { return a + b; }
inline double Sub(double a, double b) { return a - b; }
inline double Div(double a, double b) { return a / b; }
inline double Abs(double a) { return std::fabs(a); }
inline bool IsNan(double a) { return std::isnan(a); }
#endif

// gamma_k plus the fp64 reference's own error k 2^-52 (computed on the host, passed to kernels).
inline double BoundFactor(uint32_t k) {
  const double ku = static_cast<double>(k) * 0x1p-24;
  return ku / (1.0 - ku) + static_cast<double>(k) * 0x1p-52;
}

// The j-th entry (±1) of Freivalds' random vector for `seed`.
VMM_HD double FreivaldsSign(uint64_t seed, uint32_t j) {
  return (datagen::Mix64(seed ^ j) & 1) ? 1.0 : -1.0;
}

// One term of the reference: ref += a*b, mag += |a*b| (the product rounded once, as fp64).
VMM_HD void AccumulateTerm(float a, float b, double& ref, double& mag) {
  const double product = Mul(static_cast<double>(a), static_cast<double>(b));
  ref = Add(ref, product);
  mag = Add(mag, Abs(product));
}

struct ElementVerdict {
  double ratio;  // |got - ref| / bound; +inf when the error is NaN
  bool bad;      // outside the bound (a NaN error is outside)
};

VMM_HD ElementVerdict JudgeElement(float got, double ref, double mag, double factor) {
  const double bound = Add(Mul(factor, mag), kUnderflowSlack);
  const double err = Abs(Sub(static_cast<double>(got), ref));
  const double ratio = IsNan(err) ? static_cast<double>(INFINITY) : Div(err, bound);
  return {ratio, !(err <= bound)};
}

// Freivalds, one row: with s_j = ±1, |sum_j e_ij s_j| <= sum_j |e_ij|
//   <= factor * sum_j sum_p |a_ip||b_pj| = factor * bound_sum, plus the slack of the three fp64
// sums and n underflow slacks.
VMM_HD double FreivaldsRowBound(double factor, double bound_sum, uint32_t n) {
  return Add(Mul(Mul(factor, bound_sum), 1.0 + kFreivaldsRelativeSlack),
             Mul(static_cast<double>(n), kUnderflowSlack));
}

VMM_HD bool FreivaldsRowFails(double cr, double abr, double bound) {
  return !(Abs(Sub(cr, abr)) <= bound);
}

}  // namespace vmm::matmul_bound
