#include "runner/exec/matmul_check.h"

#include <cmath>
#include <cstdio>

#include "kernels/datagen.h"

namespace vmm {
namespace {

std::string FloatText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

double BoundFactor(uint32_t k) {
  const double u = std::ldexp(1.0, -24);
  const double ku = k * u;
  return ku / (1.0 - ku) + k * std::ldexp(1.0, -52);
}

constexpr double kUnderflowSlack = 1e-37;  // below fp32's smallest normal

// Recomputes row i in fp64 and records its out-of-bound elements.
void CheckRow(const float* a, const float* b, const float* c, uint32_t i, uint32_t n, uint32_t k,
              double factor, size_t max_report, std::vector<double>& ref, std::vector<double>& mag,
              MatmulVerification& out) {
  ref.assign(n, 0.0);
  mag.assign(n, 0.0);
  for (uint32_t p = 0; p < k; ++p) {
    const double aip = a[static_cast<uint64_t>(i) * k + p];
    const float* brow = b + static_cast<uint64_t>(p) * n;
    for (uint32_t j = 0; j < n; ++j) {
      ref[j] += aip * brow[j];
      mag[j] += std::fabs(aip * brow[j]);
    }
  }
  for (uint32_t j = 0; j < n; ++j) {
    const uint64_t index = static_cast<uint64_t>(i) * n + j;
    const double got = c[index];
    const double bound = factor * mag[j] + kUnderflowSlack;
    const double err = std::fabs(got - ref[j]);
    const double ratio = std::isnan(err) ? INFINITY : err / bound;
    if (ratio > out.max_error_ratio) out.max_error_ratio = ratio;
    if (!(err <= bound)) {
      ++out.mismatches;
      if (out.first.size() < max_report)
        out.first.push_back({index, FloatText(ref[j]), FloatText(got)});
    }
  }
}

// Freivalds with a ±1 vector r: returns per-row |C r - A (B r)| - bound.
void FreivaldsPass(const float* a, const float* b, const float* c, uint32_t m, uint32_t n,
                   uint32_t k, uint64_t seed, double factor, std::vector<bool>& row_bad) {
  std::vector<double> r(n), br(k, 0.0), babs(k, 0.0);
  for (uint32_t j = 0; j < n; ++j) r[j] = (datagen::Mix64(seed ^ j) & 1) ? 1.0 : -1.0;
  for (uint32_t p = 0; p < k; ++p) {
    const float* brow = b + static_cast<uint64_t>(p) * n;
    for (uint32_t j = 0; j < n; ++j) {
      br[p] += brow[j] * r[j];
      babs[p] += std::fabs(brow[j]);
    }
  }
  for (uint32_t i = 0; i < m; ++i) {
    double abr = 0, bound_sum = 0, cr = 0;
    const float* arow = a + static_cast<uint64_t>(i) * k;
    for (uint32_t p = 0; p < k; ++p) {
      abr += arow[p] * br[p];
      bound_sum += std::fabs(arow[p]) * babs[p];
    }
    const float* crow = c + static_cast<uint64_t>(i) * n;
    for (uint32_t j = 0; j < n; ++j) cr += crow[j] * r[j];
    // |sum_j e_ij r_j| <= sum_j |e_ij| <= factor * sum_j sum_p |a_ip||b_pj|, plus the fp64
    // rounding of the three O(n k) sums here (far below the fp32 bound).
    const double bound = factor * bound_sum * (1 + 1e-9) + n * kUnderflowSlack;
    if (!(std::fabs(cr - abr) <= bound)) row_bad[i] = true;
  }
}

}  // namespace

MatmulVerification VerifyMatmul(const float* a, const float* b, const float* c, uint32_t m,
                                uint32_t n, uint32_t k, size_t max_report,
                                uint64_t full_reference_limit) {
  MatmulVerification out;
  out.elements = static_cast<uint64_t>(m) * n;
  const double factor = BoundFactor(k);
  std::vector<double> ref, mag;
  if (static_cast<uint64_t>(m) * n * k <= full_reference_limit) {
    out.method = "fp64 reference";
    for (uint32_t i = 0; i < m; ++i) CheckRow(a, b, c, i, n, k, factor, max_report, ref, mag, out);
    return out;
  }
  out.method = "freivalds";
  std::vector<bool> row_bad(m, false);
  FreivaldsPass(a, b, c, m, n, k, 0x243f6a8885a308d3ull, factor, row_bad);
  FreivaldsPass(a, b, c, m, n, k, 0x13198a2e03707344ull, factor, row_bad);
  for (uint32_t i = 0; i < m; ++i)
    if (row_bad[i]) CheckRow(a, b, c, i, n, k, factor, max_report, ref, mag, out);
  return out;
}

}  // namespace vmm
