#include "runner/crosscheck/shrinker.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

const char* kScenario = R"(name: s
buffers:
  A: {shape: [1024]}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p, size: 2MiB}
  - {op: map, buffer: A, alloc: p}
  - {op: set_access, buffer: A}
  - {op: fill, name: the fill, buffer: A, seed: 1}
  - {op: create, alloc: q, size: 2MiB}
  - {op: release, alloc: q}
  - {op: synchronize, repeat: 3}
  - {op: memset, buffer: A, value: 7}
)";

TEST(Shrinker, KeepsTheStepsTheOutcomeNeedsAndDropsTheRest) {
  // The outcome: the text still has a memset and a set_access, and `create p` before `map`.
  auto keep = [](const std::string& t) {
    const size_t create = t.find("alloc: p,"), map = t.find("op: map");
    return t.find("op: memset") != std::string::npos &&
           t.find("op: set_access") != std::string::npos && create != std::string::npos &&
           map != std::string::npos && create < map;
  };
  ShrinkStats stats;
  const std::string small = ShrinkScenario(kScenario, keep, 1000, &stats);
  EXPECT_TRUE(keep(small));
  EXPECT_EQ(stats.steps_before, 9);
  EXPECT_EQ(stats.steps_after, 4) << small;
  EXPECT_EQ(small.find("synchronize"), std::string::npos);
  EXPECT_EQ(small.find("alloc: q"), std::string::npos);
  EXPECT_FALSE(stats.budget_spent);
}

// A shape is halved only while the outcome holds: here it needs at least 100 elements.
TEST(Shrinker, HalvesShapesWhileTheOutcomeHolds) {
  auto keep = [](const std::string& t) {
    const size_t at = t.find("shape: [");
    return at != std::string::npos && std::stoul(t.substr(at + 8)) >= 100;
  };
  ShrinkStats stats;
  const std::string small = ShrinkScenario(kScenario, keep, 1000, &stats);
  EXPECT_NE(small.find("A: {shape: [128]}"), std::string::npos) << small;  // 1024 / 2^3
}

TEST(Shrinker, StopsAtItsBudgetAndAnUnreadableTextIsReturnedAsItIs) {
  ShrinkStats stats;
  ShrinkScenario(
      kScenario, [](const std::string&) { return false; }, 3, &stats);
  EXPECT_EQ(stats.candidates, 3);
  EXPECT_TRUE(stats.budget_spent);
  ShrinkStats other;
  EXPECT_EQ(ShrinkScenario(
                "{[", [](const std::string&) { return true; }, 10, &other),
            "{[");
}

}  // namespace
}  // namespace vmm
