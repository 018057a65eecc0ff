#include "runner/base/diagnostic.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace vmm {

SourceLoc::SourceLoc(std::string file, int line, int column, std::string context)
    : origin(
          std::make_shared<const SourceOrigin>(SourceOrigin{std::move(file), std::move(context)})),
      line(line),
      column(column) {}

const std::string& SourceLoc::file() const {
  static const std::string kNone;
  return origin ? origin->file : kNone;
}

const std::string& SourceLoc::context() const {
  static const std::string kNone;
  return origin ? origin->context : kNone;
}

std::string FormatDiagnostic(const Diagnostic& d) {
  std::string out = d.loc.file();
  // append() rather than ":" + to_string(): GCC 12 warns falsely (-Wrestrict) on the latter.
  if (d.loc.line > 0) {
    out.append(":").append(std::to_string(d.loc.line));
    if (d.loc.column > 0) out.append(":").append(std::to_string(d.loc.column));
  }
  out += ": error: " + d.message;
  if (!d.loc.context().empty()) out += " (in " + d.loc.context() + ")";
  return out;
}

std::string FormatDiagnostics(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) out += FormatDiagnostic(d) + "\n";
  return out;
}

void SortByPosition(std::vector<Diagnostic>* diagnostics) {
  std::stable_sort(diagnostics->begin(), diagnostics->end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.loc.line != b.loc.line) return a.loc.line < b.loc.line;
                     if (a.loc.column != b.loc.column) return a.loc.column < b.loc.column;
                     // Two files (a scenario and a fragment it includes) at one position: by
                     // name, so the order does not depend on which the parser met first.
                     return a.loc.file() < b.loc.file();
                   });
}

void CollapseRepeats(std::vector<Diagnostic>* diagnostics) {
  struct Seen {
    size_t index;
    size_t more;
  };
  std::map<std::tuple<std::string, int, int>, Seen> first;
  std::vector<Diagnostic> kept;
  kept.reserve(diagnostics->size());
  bool any = false;
  for (Diagnostic& d : *diagnostics) {
    if (!d.loc.context().empty() && d.loc.line > 0) {
      auto [it, fresh] = first.try_emplace(std::make_tuple(d.loc.file(), d.loc.line, d.loc.column),
                                           Seen{kept.size(), 0});
      if (!fresh) {
        ++it->second.more;
        any = true;
        continue;
      }
    }
    kept.push_back(std::move(d));
  }
  if (!any) {
    *diagnostics = std::move(kept);
    return;
  }
  for (const auto& [key, seen] : first) {
    if (seen.more == 0) continue;
    SourceLoc& loc = kept[seen.index].loc;  // origins are shared: the note gets one of its own
    loc = SourceLoc(loc.file(), loc.line, loc.column,
                    loc.context() + "; " + std::to_string(seen.more) + " more like it");
  }
  *diagnostics = std::move(kept);
}

namespace {

thread_local uint64_t suggestion_cells_left = kSuggestionBudgetCells;
thread_local bool suggestion_budget_spent = false;  // a search needed more than was left

// The edit distance of `a` and `b` (both at most kMaxSuggestedLength long), or `cap` + 1 once it
// is certain to exceed `cap`. On the stack: loops can ask for tens of thousands of these.
size_t EditDistance(const std::string& a, const std::string& b, size_t cap) {
  size_t rows[2][kMaxSuggestedLength + 1];
  size_t* prev = rows[0];
  size_t* cur = rows[1];
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > cap) return cap + 1;  // every later row is at least this far
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// True when `c` is `word` with two neighbouring letters swapped ("nmae" for "name").
bool OneSwapApart(const std::string& word, const std::string& c) {
  if (c.size() != word.size()) return false;
  size_t first = 0;
  while (first < c.size() && c[first] == word[first]) ++first;
  return first + 1 < c.size() && c[first] == word[first + 1] && c[first + 1] == word[first] &&
         c.compare(first + 2, std::string::npos, word, first + 2, std::string::npos) == 0;
}

// The last question ClosestMatch answered about a short list (the vocabularies: ops, keys, enum
// words) and its answer: a mistake inside a loop asks the same question once per iteration, and
// comparing the strings again costs far less than the distances. Long lists (names a scenario
// made) are not kept: copying them on every question would cost what the budget saves.
inline constexpr size_t kRememberedCandidates = 256;
struct LastMatch {
  std::string word;
  std::vector<std::string> candidates;
  std::string answer;
};
thread_local LastMatch last_match;

// The closest candidate, or "" (none close enough, or the budget ran out: then *spent is true).
std::string SearchClosest(const std::string& word, const std::vector<std::string>& candidates,
                          bool* spent) {
  // Suggest only when at most a third of the word (and at least one edit) differs.
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string best;
  size_t best_distance = 0;
  for (const std::string& c : candidates) {
    // The distance is at least the difference in length: skip what cannot be close enough.
    const size_t gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (gap > limit || c.size() > kMaxSuggestedLength) continue;
    const uint64_t cells = uint64_t{word.size()} * c.size();
    if (cells > suggestion_cells_left) {  // the budget is spent: no suggestion
      *spent = true;
      suggestion_budget_spent = true;
      return "";
    }
    suggestion_cells_left -= cells;
    const size_t d = EditDistance(word, c, limit);
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return (!best.empty() && best_distance <= limit) ? best : std::string();
}

}  // namespace

void ResetSuggestionBudget() {
  suggestion_cells_left = kSuggestionBudgetCells;
  suggestion_budget_spent = false;
  last_match = LastMatch{};
}

bool SuggestionBudgetSpent() { return suggestion_budget_spent; }

std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.size() > kMaxSuggestedLength) return "";
  if (word == last_match.word && candidates == last_match.candidates) return last_match.answer;
  bool spent = false;
  std::string answer = SearchClosest(word, candidates, &spent);
  // Kept only while the budget lasts, so that the copies are bounded as the distances are.
  if (!spent && candidates.size() <= kRememberedCandidates)
    last_match = LastMatch{word, candidates, answer};
  return answer;
}

std::string SuggestName(const std::string& word, const std::vector<std::string>& candidates) {
  // One-letter names (A, B, C) are all one edit apart: a suggestion would be a guess.
  if (word.size() < 2 || suggestion_budget_spent) return "";
  std::string close = ClosestMatch(word, candidates);
  if (!close.empty()) return close;
  for (const std::string& c : candidates)
    if (OneSwapApart(word, c)) return c;
  return "";
}

}  // namespace vmm
