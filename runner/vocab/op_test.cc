#include "runner/vocab/op.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace vmm {
namespace {

TEST(OpTableTest, NamesRoundTripAndAreUnique) {
  std::set<std::string> seen;
  for (const OpInfo& info : AllOps()) {
    EXPECT_TRUE(seen.insert(info.name).second) << info.name;
    Op parsed;
    ASSERT_TRUE(ParseOpName(info.name, &parsed)) << info.name;
    EXPECT_EQ(parsed, info.op);
    EXPECT_EQ(&Describe(info.op), &info);
  }
  Op unused;
  EXPECT_FALSE(ParseOpName("mapp", &unused));
  EXPECT_EQ(FindOp("Map"), nullptr);
}

TEST(OpTableTest, FamiliesAndFlagsStateWhatTheExecutorRelies) {
  // The memory family is what runs in bursts: exactly the nine VMM calls.
  std::set<std::string> memory;
  for (const OpInfo& info : AllOps())
    if (info.family == OpFamily::kMemory) memory.insert(info.name);
  EXPECT_EQ(memory, (std::set<std::string>{"reserve", "free", "create", "release", "map",
                                           "set_access", "unmap", "export", "import"}));
  for (const OpInfo& info : AllOps()) {
    // Only checks and update carry a verdict, and only a verdict can be fatal or expected.
    EXPECT_TRUE(!info.has(kFatal) || info.has(kVerdict)) << info.name;
    EXPECT_TRUE(info.actual_label == nullptr || info.has(kVerdict)) << info.name;
    // What a capture can record is work on the stream, a copy, or a graph-only node; what only a
    // capture can hold is capturable.
    EXPECT_TRUE(!info.has(kCapturable) || info.family == OpFamily::kKernel ||
                info.family == OpFamily::kGraph || info.family == OpFamily::kData)
        << info.name;
    EXPECT_TRUE(!info.has(kCaptureOnly) || info.has(kCapturable)) << info.name;
  }
  EXPECT_TRUE(Describe(Op::kUpdate).has(kVerdict));
  EXPECT_FALSE(Describe(Op::kSnapshot).has(kVerdict));
  EXPECT_FALSE(Describe(Op::kCheckAddress).has(kDriver));  // compares recorded addresses only
}

}  // namespace
}  // namespace vmm
