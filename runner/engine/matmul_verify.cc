// Compiled with -ffp-contract=off (see CMakeLists.txt): every fp64 operation rounds once, in the
// order written, as on the device (kernels/matmul_bound.h).
#include "runner/engine/matmul_verify.h"

#include <vector>

namespace vmm {
namespace {

using namespace matmul_bound;  // NOLINT(google-build-using-namespace): the shared arithmetic

// Recomputes row i in fp64 and records its out-of-bound elements.
void CheckRow(const float* a, const float* b, const float* c, uint32_t i, uint32_t n, uint32_t k,
              double factor, size_t max_report, std::vector<double>& ref, std::vector<double>& mag,
              MatmulCheckResult& out) {
  ref.assign(n, 0.0);
  mag.assign(n, 0.0);
  for (uint32_t p = 0; p < k; ++p) {
    const float aip = a[static_cast<uint64_t>(i) * k + p];
    const float* brow = b + static_cast<uint64_t>(p) * n;
    for (uint32_t j = 0; j < n; ++j) AccumulateTerm(aip, brow[j], ref[j], mag[j]);
  }
  for (uint32_t j = 0; j < n; ++j) {
    const uint64_t index = static_cast<uint64_t>(i) * n + j;
    const ElementVerdict v = JudgeElement(c[index], ref[j], mag[j], factor);
    if (v.ratio > out.max_error_ratio) out.max_error_ratio = v.ratio;
    if (v.bad) {
      ++out.mismatches;
      if (out.first.size() < max_report) out.first.push_back({index, ref[j], c[index]});
    }
  }
}

// Freivalds with the ±1 vector of `seed`: marks the rows whose |C r - A (B r)| exceeds the bound.
void FreivaldsPass(const float* a, const float* b, const float* c, uint32_t m, uint32_t n,
                   uint32_t k, uint64_t seed, double factor, std::vector<bool>& row_bad) {
  std::vector<double> r(n), br(k, 0.0), babs(k, 0.0);
  for (uint32_t j = 0; j < n; ++j) r[j] = FreivaldsSign(seed, j);
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
    if (FreivaldsRowFails(cr, abr, FreivaldsRowBound(factor, bound_sum, n))) row_bad[i] = true;
  }
}

}  // namespace

MatmulCheckResult VerifyMatmul(const float* a, const float* b, const float* c, uint32_t m,
                               uint32_t n, uint32_t k, size_t max_report,
                               uint64_t full_reference_limit) {
  MatmulCheckResult out;
  out.elements = static_cast<uint64_t>(m) * n;
  const double factor = BoundFactor(k);
  std::vector<double> ref, mag;
  if (static_cast<uint64_t>(m) * n * k <= full_reference_limit) {
    for (uint32_t i = 0; i < m; ++i) CheckRow(a, b, c, i, n, k, factor, max_report, ref, mag, out);
    return out;
  }
  out.freivalds = true;
  std::vector<bool> row_bad(m, false);
  for (uint64_t seed : {kFreivaldsSeed0, kFreivaldsSeed1})
    FreivaldsPass(a, b, c, m, n, k, seed, factor, row_bad);
  for (uint32_t i = 0; i < m; ++i) {
    if (!row_bad[i]) continue;
    ++out.rows_recomputed;
    CheckRow(a, b, c, i, n, k, factor, max_report, ref, mag, out);
  }
  return out;
}

}  // namespace vmm
