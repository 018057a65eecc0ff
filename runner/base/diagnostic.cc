#include "runner/base/diagnostic.h"

#include <algorithm>

namespace vmm {

std::string FormatDiagnostic(const Diagnostic& d) {
  std::string out = d.loc.file;
  if (d.loc.line > 0) {
    out += ":" + std::to_string(d.loc.line);
    if (d.loc.column > 0) out += ":" + std::to_string(d.loc.column);
  }
  out += ": error: " + d.message;
  return out;
}

std::string FormatDiagnostics(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) out += FormatDiagnostic(d) + "\n";
  return out;
}

namespace {
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& c : candidates) {
    size_t d = EditDistance(word, c);
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // Suggest only when at most a third of the word (and at least one edit) differs.
  size_t limit = std::max<size_t>(1, word.size() / 3);
  return (!best.empty() && best_distance <= limit) ? best : std::string();
}

}  // namespace vmm
