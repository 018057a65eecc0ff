#include "runner/trace/trace_compare.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "runner/vocab/cuda_errors.h"

namespace vmm::trace {
namespace {

constexpr size_t kListed = 50;     // differences listed per side
constexpr size_t kLookAhead = 64;  // the greedy alignment's window

// Names objects by the order they appear: the n-th reservation (or handle) made is R<n> (h<n>).
struct Ordinals {
  std::map<uint64_t, uint64_t> bases;            // reservation base -> size
  std::map<uint64_t, std::string> base_names;    // reservation base -> R<n>
  std::map<uint64_t, std::string> handle_names;  // handle value -> h<n> (latest)
  int reservations = 0, handles = 0;

  std::string Where(uint64_t ptr) const {
    auto it = bases.upper_bound(ptr);
    if (it != bases.begin()) {
      --it;
      if (ptr - it->first < it->second)
        return base_names.at(it->first) + "+" + std::to_string(ptr - it->first);
    }
    return "?";  // outside every reservation this trace made
  }
  std::string Handle(uint64_t value) const {
    auto it = handle_names.find(value);
    return it == handle_names.end() ? "h?" : it->second;
  }
  std::string NewHandle(uint64_t value) {
    return handle_names[value] = "h" + std::to_string(handles++);
  }
};

std::string Token(const TraceRecord& r, Ordinals& o) {
  const std::string size = " size=" + std::to_string(r.Number("size"));
  std::string t;
  switch (r.call) {
    case TraceCall::k_cuMemAddressReserve:
      t = "reserve" + size;
      if (r.result == 0) {
        o.bases[r.Number("ptr")] = r.Number("size");
        o.base_names[r.Number("ptr")] = "R" + std::to_string(o.reservations++);
        t += " -> " + o.base_names[r.Number("ptr")];
      }
      break;
    case TraceCall::k_cuMemAddressFree:
      t = "free " + o.Where(r.Number("ptr"));
      if (r.result == 0) o.bases.erase(r.Number("ptr"));
      break;
    case TraceCall::k_cuMemCreate:
      t = "create" + size + " location=" + std::to_string(r.Number("location")) +
          " device=" + std::to_string(r.Number("device"));
      if (r.result == 0) t += " -> " + o.NewHandle(r.Number("handle"));
      break;
    case TraceCall::k_cuMemRelease:
      t = "release " + o.Handle(r.Number("handle"));
      break;
    case TraceCall::k_cuMemMap:
      t = "map " + o.Where(r.Number("ptr")) + size + " " + o.Handle(r.Number("handle"));
      break;
    case TraceCall::k_cuMemUnmap:
      t = "unmap " + o.Where(r.Number("ptr")) + size;
      break;
    case TraceCall::k_cuMemSetAccess: {
      t = "set_access " + o.Where(r.Number("ptr")) + size + " access=";
      for (const auto& [device, flags] : r.access)
        t += std::to_string(device) + ":" + std::to_string(flags) + ";";
      break;
    }
    case TraceCall::k_cuMemRetainAllocationHandle:
      t = "retain " + o.Where(r.Number("ptr"));
      if (r.result == 0) t += " -> " + o.NewHandle(r.Number("handle"));
      break;
    case TraceCall::k_cuMemExportToShareableHandle:
      t = "export " + o.Handle(r.Number("handle")) + " type=" + std::to_string(r.Number("type"));
      break;
    case TraceCall::k_cuMemImportFromShareableHandle:
      t = "import type=" + std::to_string(r.Number("type"));
      if (r.result == 0) t += " -> " + o.NewHandle(r.Number("handle"));
      break;
    default:
      t = r.info().name;
      break;
  }
  if (r.result != 0) {
    const CudaErrorName* e = FindCudaErrorByValue(r.result);
    t += " => " + (e != nullptr ? std::string(e->name) : std::to_string(r.result));
  }
  return t;
}

// The length of the shortest edit script (insertions and deletions) turning a into b: Myers'
// greedy O((N+M)D) algorithm, O(N+M) memory; nullopt past `limit` (its time grows with D).
std::optional<size_t> EditDistance(const std::vector<std::string>& a,
                                   const std::vector<std::string>& b, size_t limit) {
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size()), max = n + m;
  if (max == 0) return 0;
  std::vector<long> v(2 * max + 2, 0);
  for (long d = 0; d <= max; ++d) {
    if (static_cast<size_t>(d) > limit) return std::nullopt;
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[max + k - 1] < v[max + k + 1])) ? v[max + k + 1]
                                                                        : v[max + k - 1] + 1;
      long y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[max + k] = x;
      if (x >= n && y >= m) return static_cast<size_t>(d);
    }
  }
  return static_cast<size_t>(max);
}

}  // namespace

std::vector<std::string> VmmTokens(const CallTrace& trace, uint64_t pid, std::vector<int>* lines) {
  std::vector<std::string> tokens;
  Ordinals ordinals;
  for (const TraceRecord& r : trace.records) {
    if (r.pid != pid || r.info().family != CallFamily::kVmm) continue;
    tokens.push_back(Token(r, ordinals));
    if (lines != nullptr) lines->push_back(r.line);
  }
  return tokens;
}

TraceComparison CompareVmmCalls(const CallTrace& a, uint64_t pid_a, const CallTrace& b,
                                uint64_t pid_b) {
  std::vector<int> lines_a, lines_b;
  const std::vector<std::string> ta = VmmTokens(a, pid_a, &lines_a);
  const std::vector<std::string> tb = VmmTokens(b, pid_b, &lines_b);
  TraceComparison c;
  c.a_calls = ta.size();
  c.b_calls = tb.size();
  const std::optional<size_t> d = EditDistance(ta, tb, kMaxDifferences);
  c.counted = d.has_value();
  // Past the limit: at most what kMaxDifferences + 1 differences leave.
  const size_t distance = d ? *d : std::min(kMaxDifferences + 1, ta.size() + tb.size());
  c.matched = (ta.size() + tb.size() - distance) / 2;
  size_t i = 0, j = 0;
  auto only = [](std::vector<std::string>& list, int line, const std::string& token) {
    if (list.size() < kListed) list.push_back("line " + std::to_string(line) + ": " + token);
  };
  while (i < ta.size() || j < tb.size()) {
    if (i < ta.size() && j < tb.size() && ta[i] == tb[j]) {
      ++i, ++j;
      continue;
    }
    size_t skip_b = kLookAhead + 1, skip_a = kLookAhead + 1;  // how far the other side resyncs
    for (size_t s = 1; i < ta.size() && s <= kLookAhead && j + s < tb.size(); ++s)
      if (tb[j + s] == ta[i]) {
        skip_b = s;
        break;
      }
    for (size_t s = 1; j < tb.size() && s <= kLookAhead && i + s < ta.size(); ++s)
      if (ta[i + s] == tb[j]) {
        skip_a = s;
        break;
      }
    if (j < tb.size() && (i >= ta.size() || skip_b < skip_a)) {
      only(c.only_b, lines_b[j], tb[j]);
      ++j;
    } else {
      only(c.only_a, lines_a[i], ta[i]);
      ++i;
    }
  }
  return c;
}

StatusOr<uint64_t> VmmProcess(const CallTrace& trace, int64_t pid) {
  std::set<uint64_t> with_vmm;
  for (const TraceRecord& r : trace.records)
    if (r.info().family == CallFamily::kVmm) with_vmm.insert(r.pid);
  if (pid >= 0) {
    if (with_vmm.count(static_cast<uint64_t>(pid)) == 0)
      return InvalidInput("process " + std::to_string(pid) + " made no VMM calls in the trace" +
                          (with_vmm.empty()
                               ? std::string()
                               : " (one that did: " + std::to_string(*with_vmm.begin()) + ")"));
    return static_cast<uint64_t>(pid);
  }
  if (with_vmm.empty())
    return InvalidInput(
        "the trace holds no VMM calls (was the program's memory made with "
        "cuMemCreate and cuMemMap, e.g. PyTorch with expandable_segments:True?)");
  if (with_vmm.size() > 1)
    return InvalidInput("processes " + std::to_string(*with_vmm.begin()) + " and " +
                        std::to_string(*std::next(with_vmm.begin())) +
                        " both made VMM calls; choose one with --pid");
  return *with_vmm.begin();
}

}  // namespace vmm::trace
