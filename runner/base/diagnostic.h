// Source locations and diagnostics for scenario and config files.
//
// Every problem found in an input file is a Diagnostic; they are collected (all errors in one pass)
// and printed as "FILE:LINE:COL: error: MESSAGE". Lines and columns are 1-based.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vmm {

// The file a value was written in and, for values made by loops and fragments, where its template
// was expanded (`for i = 37`, `use 'page_cycle' at s.yaml:7:5`; empty for text written once).
// Immutable once made, and shared: the scenario builder points every location of the text written
// once in the document at one origin, and the expander makes one per loop pass and fragment use,
// so copying a location allocates nothing (a 100,000-step loop holds millions of them).
struct SourceOrigin {
  std::string file;  // as given by the user (not canonicalised)
  std::string context;
};

struct SourceLoc {
  SourceLoc() = default;
  // A location with an origin of its own (diagnostics; hot paths share one with the next).
  SourceLoc(std::string file, int line, int column, std::string context = {});
  SourceLoc(std::shared_ptr<const SourceOrigin> origin, int line, int column)
      : origin(std::move(origin)), line(line), column(column) {}

  const std::string& file() const;     // "" when unknown
  const std::string& context() const;  // printed after the message; "" for text written once

  std::shared_ptr<const SourceOrigin> origin;  // null: no file known
  int line = 0;                                // 1-based; 0 = unknown
  int column = 0;                              // 1-based; 0 = unknown
};

struct Diagnostic {
  SourceLoc loc;
  std::string message;  // lower-case, quotes offending names, says expected vs got
};

// "FILE:LINE:COL: error: MESSAGE" (LINE/COL omitted when unknown), followed by " (in CONTEXT)"
// when the location has a context.
std::string FormatDiagnostic(const Diagnostic& d);

// All diagnostics, one per line, in the order given.
std::string FormatDiagnostics(const std::vector<Diagnostic>& ds);

// Sorts diagnostics by position, then by file name where two files share one (a scenario and a
// fragment it includes); stable: the same position in one file keeps its order. File-level ones
// (no line) first.
void SortByPosition(std::vector<Diagnostic>* diagnostics);

// Keeps, of the diagnostics that have a context (made by a loop or fragment), only the first at
// each file:line:col, and notes how many more there were ("for i = 0; 511 more like it"): a
// mistake in a loop body is reported once, not once per iteration. Order is kept.
void CollapseRepeats(std::vector<Diagnostic>* diagnostics);

// Names longer than this get no "did you mean" (the search is quadratic in the name's length).
inline constexpr size_t kMaxSuggestedLength = 64;

// The candidate closest to `word` by edit distance, or "" when none is close enough to suggest
// (at most a third of the word differs) or `word` is longer than kMaxSuggestedLength.
std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates);

// The work ClosestMatch may spend (edit-distance cells) until the next ResetSuggestionBudget:
// loops can make thousands of unknown names against thousands of live ones, and a refused input
// must be refused in well under a second. Past it, messages carry no "did you mean".
inline constexpr uint64_t kSuggestionBudgetCells = 20'000'000;
// Gives this thread's suggestions their whole budget again (at the start of each parse and plan).
void ResetSuggestionBudget();
// True once this thread's budget ran out (until the next reset): SuggestName answers "" then, so
// a caller can skip gathering candidates (thousands of names, once per unknown name).
bool SuggestionBudgetSpent();

// The "did you mean" of every message: ClosestMatch, plus one swap of neighbouring letters
// ("nmae" -> "name") as a single typo; nothing for one-letter words (A, B and C are all one edit
// apart, so a suggestion would be a guess), nor once the budget is spent.
std::string SuggestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace vmm
