// Schema errors set aside step by step (partial_scenario.h): what is kept, what is tainted, and
// when nothing is set aside at all.
#include "runner/scenario/partial_scenario.h"

#include <gtest/gtest.h>

#include <string>

#include "runner/scenario/parse.h"

namespace vmm {
namespace {

PartialScenario Partial(const std::string& text) {
  std::vector<Diagnostic> d;
  PartialScenario partial;
  EXPECT_FALSE(ParseScenario(text, "p.yaml", ExpandOptions{}, &d, nullptr, &partial));
  EXPECT_FALSE(d.empty());
  return partial;
}

const std::string kHead =
    "version: 1\nname: p\ngranularity: 2MiB\nbuffers:\n  A: {shape: [4]}\n"
    "  B: {shape: [4]}\n";

TEST(PartialScenario, AStepWithASchemaErrorIsSetAsideAndWhatUsesItsNamesTainted) {
  const PartialScenario p = Partial(kHead +
                                    "steps:\n"                                  // line 7
                                    "  - op: reserve\n"                         // 8
                                    "    buffer: A\n"                           // 9
                                    "    colour: red\n"                         // 10
                                    "  - {op: reserve, buffer: B}\n"            // 11
                                    "  - {op: create, alloc: p, size: 2MiB}\n"  // 12
                                    "  - {op: map, buffer: A, alloc: p}\n"      // 13
                                    "  - {op: map, buffer: B, alloc: p}\n");    // 14
  ASSERT_TRUE(p.scenario);
  EXPECT_EQ(p.scenario->steps.size(), 4u);
  EXPECT_EQ(p.tainted, (std::vector<std::pair<int, int>>{{13, 13}}));
  EXPECT_TRUE(p.Tainted(13));
  EXPECT_FALSE(p.Tainted(14));
  EXPECT_FALSE(p.Tainted(9));  // the dropped step itself reports its schema error
}

TEST(PartialScenario, NothingIsSetAsideForErrorsOutsideTheStepsOrInAnExpandedScenario) {
  EXPECT_FALSE(Partial("version: 1\nname: p\ngranularity: 2MiB\nbuffers:\n  A: {shape: lots}\n"
                       "steps:\n  - {op: reserve, buffer: A}\n")
                   .scenario);
  EXPECT_FALSE(Partial(kHead + "vars: {n: 1}\nsteps:\n  - {op: reserve, buffer: A, colour: red}\n"
                               "  - {op: reserve, buffer: B}\n")
                   .scenario);
  // Every step set aside: nothing left to plan.
  EXPECT_FALSE(Partial(kHead + "steps:\n  - {op: reserve, buffer: A, colour: red}\n").scenario);
}

}  // namespace
}  // namespace vmm
