#include "runner/base/diagnostic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "runner/base/format.h"

namespace vmm {
namespace {

TEST(Diagnostic, FormatsFileLineColumn) {
  Diagnostic d{{"scenarios/x.yaml", 12, 7}, "unknown key 'sizee'"};
  EXPECT_EQ(FormatDiagnostic(d), "scenarios/x.yaml:12:7: error: unknown key 'sizee'");
}

TEST(Diagnostic, OmitsUnknownPosition) {
  EXPECT_EQ(FormatDiagnostic({{"a.yaml", 0, 0}, "empty file"}), "a.yaml: error: empty file");
}

TEST(Diagnostic, AppendsTheExpansionContext) {
  Diagnostic d{{"s.yaml", 9, 11, "for i = 37"}, "unknown alloc 'p37'"};
  EXPECT_EQ(FormatDiagnostic(d), "s.yaml:9:11: error: unknown alloc 'p37' (in for i = 37)");
}

TEST(Diagnostic, SortsTwoFilesAtOnePositionTheSameWayWhicheverCameFirst) {
  const Diagnostic main{{"s.yaml", 4, 3}, "unknown key 'nmae'"};
  const Diagnostic fragment{{"inc/steps.yaml", 4, 3}, "unknown buffer 'B'"};
  const Diagnostic same_file_later{{"s.yaml", 4, 3}, "second in s.yaml"};
  for (bool fragment_first : {false, true}) {
    std::vector<Diagnostic> ds = fragment_first
                                     ? std::vector<Diagnostic>{fragment, main, same_file_later}
                                     : std::vector<Diagnostic>{main, same_file_later, fragment};
    SortByPosition(&ds);
    EXPECT_EQ(FormatDiagnostics(ds),
              "inc/steps.yaml:4:3: error: unknown buffer 'B'\n"
              "s.yaml:4:3: error: unknown key 'nmae'\n"
              "s.yaml:4:3: error: second in s.yaml\n");
  }
}

TEST(Diagnostic, CollapsesRepeatsFromLoops) {
  std::vector<Diagnostic> ds = {{{"s.yaml", 9, 11, "for i = 0"}, "unknown alloc 'q0'"},
                                {{"s.yaml", 3, 1}, "plain"},
                                {{"s.yaml", 9, 11, "for i = 1"}, "unknown alloc 'q1'"},
                                {{"s.yaml", 9, 11, "for i = 2"}, "unknown alloc 'q2'"}};
  CollapseRepeats(&ds);
  EXPECT_EQ(FormatDiagnostics(ds),
            "s.yaml:9:11: error: unknown alloc 'q0' (in for i = 0; 2 more like it)\n"
            "s.yaml:3:1: error: plain\n");
}

// Locations share their origin (file and context); the "more like it" note is the kept
// diagnostic's own: a location that shared its origin keeps its context as it was.
TEST(Diagnostic, CollapsingLeavesLocationsThatShareTheOriginAlone) {
  const SourceLoc pass{"s.yaml", 9, 11, "for i = 0"};
  std::vector<Diagnostic> ds = {{pass, "unknown alloc 'q0'"},
                                {{"s.yaml", 9, 11, "for i = 1"}, "unknown alloc 'q1'"}};
  const SourceLoc elsewhere{pass.origin, 4, 2};  // another value of the same loop pass
  CollapseRepeats(&ds);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].loc.context(), "for i = 0; 1 more like it");
  EXPECT_EQ(ds[0].loc.file(), "s.yaml");
  EXPECT_EQ(pass.context(), "for i = 0");
  EXPECT_EQ(elsewhere.context(), "for i = 0");
}

TEST(Diagnostic, ALocationWithoutOriginHasNoFileNorContext) {
  const SourceLoc none;
  EXPECT_EQ(none.file(), "");
  EXPECT_EQ(none.context(), "");
  EXPECT_EQ(FormatDiagnostic({none, "no file"}), ": error: no file");
}

TEST(ClosestMatch, SuggestsNearNamesOnly) {
  std::vector<std::string> keys = {"size", "offset", "alloc_offset", "buffer"};
  EXPECT_EQ(ClosestMatch("sizee", keys), "size");
  EXPECT_EQ(ClosestMatch("bufer", keys), "buffer");
  EXPECT_EQ(ClosestMatch("zzzzzz", keys), "");
  // The same word again, against the same list and then another (the last answer is remembered).
  EXPECT_EQ(ClosestMatch("bufer", keys), "buffer");
  EXPECT_EQ(ClosestMatch("bufer", std::vector<std::string>{"size", "offset"}), "");
  EXPECT_EQ(ClosestMatch("bufer", std::vector<std::string>{"bufers"}), "bufers");
}

// The textbook full-matrix edit distance: the reference the banded, early-exit one must agree with.
size_t ReferenceDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j)
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
  return d[a.size()][b.size()];
}

TEST(ClosestMatch, AgreesWithTheFullEditDistanceOnRandomWords) {
  std::mt19937 rng(7);
  auto word = [&](size_t max_len) {
    std::string w(1 + rng() % max_len, 'a');
    for (char& c : w) c = static_cast<char>('a' + rng() % 4);  // few letters: many near misses
    return w;
  };
  for (int round = 0; round < 300; ++round) {
    ResetSuggestionBudget();
    std::vector<std::string> candidates;
    for (int i = 0; i < 12; ++i) candidates.push_back(word(round % 2 ? 12 : kMaxSuggestedLength));
    const std::string w = word(round % 2 ? 12 : kMaxSuggestedLength);
    // The documented rule: the first candidate at the smallest distance, if within a third.
    const size_t limit = std::max<size_t>(1, w.size() / 3);
    std::string want;
    size_t best = 0;
    for (const std::string& c : candidates) {
      const size_t d = ReferenceDistance(w, c);
      if (want.empty() || d < best) want = c, best = d;
    }
    if (best > limit) want.clear();
    EXPECT_EQ(ClosestMatch(w, candidates), want) << w;
  }
}

TEST(SuggestName, NothingOnceTheBudgetIsSpentUntilTheNextReset) {
  ResetSuggestionBudget();
  EXPECT_FALSE(SuggestionBudgetSpent());
  EXPECT_EQ(SuggestName("nmae", {"name", "other"}), "name");  // one swap
  // Enough long candidates to need more edit-distance cells than the budget holds.
  const std::string word(kMaxSuggestedLength, 'q');
  const uint64_t cells_each = uint64_t{kMaxSuggestedLength} * kMaxSuggestedLength;
  std::vector<std::string> many;
  for (uint64_t i = 0; i <= kSuggestionBudgetCells / cells_each; ++i) {
    std::string c(kMaxSuggestedLength, 'z');
    c.replace(0, 8, std::to_string(10000000 + i));
    many.push_back(c);
  }
  EXPECT_EQ(ClosestMatch(word, many), "");
  EXPECT_TRUE(SuggestionBudgetSpent());
  EXPECT_EQ(SuggestName("nmae", {"name", "other"}), "") << "no suggestion past the budget";
  ResetSuggestionBudget();
  EXPECT_FALSE(SuggestionBudgetSpent());
  EXPECT_EQ(SuggestName("nmae", {"name", "other"}), "name");
}

TEST(Format, HexAndBytes) {
  EXPECT_EQ(Hex(0x7f3a00000000ull), "0x7f3a00000000");
  EXPECT_EQ(FormatBytes(2ull << 20), "2 MiB");
  EXPECT_EQ(FormatBytes(3000), "3000 B");
  EXPECT_EQ(FormatBytes(0), "0 B");
}

}  // namespace
}  // namespace vmm

#include "runner/base/sha256.h"

namespace vmm {
namespace {

// FIPS 180-4 / NIST example vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace vmm
