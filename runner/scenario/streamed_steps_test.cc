// A scenario that expands streams its top-level steps through validation and building
// (parse.cc, ValidateAndBuildSteps); keeping the expansion (ParseScenario's `expanded`) takes the
// whole-document path. The two must give the same steps and the same diagnostics: the whole
// document path is the reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/scenario/expander.h"
#include "runner/scenario/parse.h"
#include "runner/scenario/scenario.h"

namespace vmm {
namespace {

template <typename T>
std::string Show(const char* key, const Located<T>& f) {
  std::string out = std::string(key) + "=";
  if constexpr (std::is_same_v<T, std::string>) {
    out += f.value;
  } else {
    out += std::to_string(f.value);
  }
  return out + (f.set ? "!" : "") + "@" + std::to_string(f.loc.line) + ":" +
         std::to_string(f.loc.column) + "(" + f.loc.context() + ") ";
}

// Every field of `step` and its body, with set flags and locations, one line per step.
void Render(const Step& step, const std::string& indent, std::string* out) {
  Step copy = step;  // the mutable_ accessors add unset fields to the copy only
  *out += indent + OpName(step.op) + "@" + std::to_string(step.loc.line) + " " +
          Show("name", step.name);
  for (const auto& f : kStepTextFields) *out += Show(f.key, (copy.*f.field)());
  for (const auto& f : kStepSizeFields) *out += Show(f.key, (copy.*f.field)());
  for (const auto& f : kStepIntegerFields) *out += Show(f.key, (copy.*f.field)());
  for (const auto& f : kStepDurationFields) *out += Show(f.key, (copy.*f.field)());
  for (const auto& f : kStepFlagFields) *out += Show(f.key, (copy.*f.field)());
  for (const StepMapEntry& e : step.keys().entries) *out += Show(e.key.c_str(), e.value);
  *out += "\n";
  for (const Step& inner : step.steps) Render(inner, indent + "  ", out);
}

struct Parsed {
  bool ok = false;
  std::string steps;
  std::string diagnostics;
};

Parsed ParseBothWays(const std::string& text, bool keep_expansion) {
  std::vector<Diagnostic> d;
  Expansion kept;
  std::optional<Scenario> s =
      ParseScenario(text, "s.yaml", ExpandOptions{}, &d, keep_expansion ? &kept : nullptr);
  Parsed p;
  p.ok = s.has_value();
  if (s)
    for (const Step& step : s->steps) Render(step, "", &p.steps);
  p.diagnostics = FormatDiagnostics(d);
  return p;
}

void ExpectSameBothWays(const std::string& text) {
  const Parsed streamed = ParseBothWays(text, false);
  const Parsed whole = ParseBothWays(text, true);
  EXPECT_EQ(streamed.ok, whole.ok);
  EXPECT_EQ(streamed.steps, whole.steps);
  EXPECT_EQ(streamed.diagnostics, whole.diagnostics);
}

TEST(StreamedSteps, AValidLoopBuildsTheSameStepsAsTheWholeDocument) {
  const std::string text = R"(version: 1
name: streamed
vars: {n: 3}
buffers: {A: {shape: [4]}}
steps:
  - {op: reserve, buffer: A, size: 2MiB}
  - for: i
    in: {range: [0, "${n}"]}
    steps:
      - {op: create, name: "c${i}", alloc: "p${i}", size: 2MiB}
      - {op: map, buffer: A, alloc: "p${i}", repeat: 2}
      - {op: set_access, buffer: A}
      - {op: fill, buffer: A, seed: "${i + 7}"}
      - op: capture
        graph: "g${i}"
        steps:
          - {op: fill, buffer: A, seed: "${i}"}
      - {op: unmap, buffer: A}
      - {op: release, alloc: "p${i}"}
  - isolate: {expect: ok}
    steps:
      - {op: synchronize}
)";
  const Parsed streamed = ParseBothWays(text, false);
  ASSERT_TRUE(streamed.ok) << streamed.diagnostics;
  EXPECT_NE(streamed.steps.find("c2"), std::string::npos);
  ExpectSameBothWays(text);
}

TEST(StreamedSteps, MistakesInAndAroundALoopAreReportedAlike) {
  // Schema mistakes inside expanded steps (repeated per iteration, then collapsed), at the top
  // level, and a builder error (a size past 64 bits) in a streamed step.
  const std::string text = R"(version: 1
name: mistakes
granularity: 3MiB
vars: {n: 4}
buffers: {A: {shape: [4]}}
steps:
  - {op: reserve, buffer: A, sizee: 2MiB}
  - for: i
    in: {range: [0, "${n}"]}
    steps:
      - {op: create, alloc: "p${i}", size: 2MiB, colour: red}
      - {op: fill, buffer: A, seed: "${i}", repeat: 0}
  - {op: reserve, buffer: A, size: 99999999999999999999}
)";
  ExpectSameBothWays(text);
  const Parsed streamed = ParseBothWays(text, false);
  for (const char* word : {"sizee", "colour", "repeat", "granularity"})
    EXPECT_NE(streamed.diagnostics.find(word), std::string::npos) << word << streamed.diagnostics;
  ExpectSameBothWays(R"(version: 1
name: overflow
vars: {big: 99999999999999999999}
steps:
  - {op: reserve, buffer: A, size: "${big}"}
)");
}

TEST(StreamedSteps, AFailedExpansionReportsOnlyTheExpansionsMistakes) {
  // The loop's third iteration fails to substitute; the steps streamed before it are valid, and
  // the bad key in them must not be reported either (nothing is validated after a failed
  // expansion, as on the whole-document path).
  const std::string text = R"(version: 1
name: bad_expansion
steps:
  - for: i
    in: [1, 2, x]
    steps:
      - {op: create, alloc: "p${i}", size: "${i * 2MiB}", colour: red}
)";
  ExpectSameBothWays(text);
  const Parsed streamed = ParseBothWays(text, false);
  EXPECT_FALSE(streamed.ok);
  EXPECT_EQ(streamed.diagnostics.find("colour"), std::string::npos) << streamed.diagnostics;
}

}  // namespace
}  // namespace vmm
