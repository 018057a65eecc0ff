#include "runner/engine/host/cpu_checks.h"

#include <algorithm>
#include <cstring>

#include "kernels/datagen.h"

namespace vmm::host {
namespace {

uint32_t Word(const unsigned char* bytes, uint64_t i) {
  uint32_t w;
  std::memcpy(&w, bytes + i * 4, 4);
  return w;
}

// Walks the words once: `want(i)` is the reference word; hashes `a` always, the reference words
// when `hash_want`.
template <typename Want>
DataCompareResult Scan(const void* a, uint64_t count, uint32_t max_report, bool hash_want,
                       Want want) {
  const auto* pa = static_cast<const unsigned char*>(a);
  const uint32_t keep = std::min(max_report, kMaxCompareReport);
  DataCompareResult r;
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t got = Word(pa, i);
    const uint32_t ref = want(i);
    r.hash += datagen::HashWord(got, i);
    if (hash_want) r.other_hash += datagen::HashWord(ref, i);
    if (got == ref) continue;
    if (r.first.size() < keep) r.first.push_back({i, ref, got});
    ++r.mismatches;
  }
  return r;
}

}  // namespace

DataCompareResult CompareWordsRef(const void* a, const void* b, uint64_t count,
                                  const CompareOptions& options) {
  const auto* pb = static_cast<const unsigned char*>(b);
  DataCompareResult r = Scan(a, count, options.max_report, !options.other_hash_known,
                             [pb](uint64_t i) { return Word(pb, i); });
  if (options.other_hash_known) r.other_hash = options.other_hash;
  return r;
}

DataCompareResult CompareValueRef(const void* a, uint32_t pattern, uint64_t count,
                                  uint32_t max_report) {
  return Scan(a, count, max_report, false, [pattern](uint64_t) { return pattern; });
}

}  // namespace vmm::host
