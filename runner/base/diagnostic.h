// Source locations and diagnostics for scenario and config files.
//
// Every problem found in an input file is a Diagnostic; they are collected (all errors in one pass)
// and printed as "FILE:LINE:COL: error: MESSAGE". Lines and columns are 1-based.
#pragma once

#include <string>
#include <vector>

namespace vmm {

struct SourceLoc {
  std::string file;  // as given by the user (not canonicalised)
  int line = 0;      // 1-based; 0 = unknown
  int column = 0;    // 1-based; 0 = unknown
};

struct Diagnostic {
  SourceLoc loc;
  std::string message;  // lower-case, quotes offending names, says expected vs got
};

// "FILE:LINE:COL: error: MESSAGE" (LINE/COL omitted when unknown).
std::string FormatDiagnostic(const Diagnostic& d);

// All diagnostics, one per line, in the order given.
std::string FormatDiagnostics(const std::vector<Diagnostic>& ds);

// The candidate closest to `word` by edit distance, or "" when none is close enough to suggest.
std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace vmm
