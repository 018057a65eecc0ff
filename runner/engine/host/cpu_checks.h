// The host backend's data checks: plain loops over memory, the reference the device kernels
// (kernels/compare.cu) are tested against. They check nothing about the memory: HostEngine proves
// that every byte they read is accessible first.
#pragma once

#include <cstdint>

#include "runner/engine/data_plane.h"

namespace vmm::host {

// Compares `count` 32-bit words of `a` (checked) with `b` (reference): the mismatch count, the
// first min(max_report, kMaxCompareReport) {index, want = b[i], got = a[i]} ascending, and both
// datagen hashes, each computed from its own words (other_hash is taken from `options` when
// known). The hashes are computed directly, not derived from each other as the device does, so a
// test of one against the other checks that derivation too.
DataCompareResult CompareWordsRef(const void* a, const void* b, uint64_t count,
                                  const CompareOptions& options);

// As CompareWordsRef against `count` copies of `pattern`; other_hash is 0.
DataCompareResult CompareValueRef(const void* a, uint32_t pattern, uint64_t count,
                                  uint32_t max_report);

}  // namespace vmm::host
