// The sparse Step (scenario.h): a field the step lacks reads as unset, one written reads back, a
// copy is deep, and the parser stores what the file says and the schema's defaults, nothing more.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/scenario/parse.h"
#include "runner/scenario/scenario.h"

namespace vmm {
namespace {

TEST(StepFields, AFieldTheStepLacksReadsAsUnset) {
  const Step step;
  EXPECT_FALSE(step.buffer().set);
  EXPECT_EQ(step.buffer().value, "");
  EXPECT_EQ(step.size().value, 0u);
  EXPECT_FALSE(step.wait().set);
  EXPECT_TRUE(step.of().empty());
  EXPECT_FALSE(step.freed().set);
  EXPECT_TRUE(step.keys().entries.empty());
  EXPECT_FALSE(step.isolate().expect.set);
}

TEST(StepFields, WrittenFieldsReadBackAndStayApart) {
  Step step;
  step.mutable_buffer() = {"A", SourceLoc{"s.yaml", 3, 7}, true};
  step.mutable_alloc().value = "pA";
  step.mutable_size().value = 4096;
  step.mutable_offset().value = 8192;
  step.mutable_wait().value = false;
  step.mutable_of().push_back({"r1", {}, true});
  EXPECT_EQ(step.buffer().value, "A");
  EXPECT_EQ(step.buffer().loc.line, 3);
  EXPECT_TRUE(step.buffer().set);
  EXPECT_EQ(step.alloc().value, "pA");
  EXPECT_EQ(step.size().value, 4096u);
  EXPECT_EQ(step.offset().value, 8192u);
  EXPECT_FALSE(step.wait().value);
  ASSERT_EQ(step.of().size(), 1u);
  // Fields of one kind share storage: the others stay unset.
  EXPECT_FALSE(step.graph().set);
  EXPECT_EQ(step.alignment().value, 0u);
  // Writing a field again changes it in place.
  step.mutable_size().value = 2;
  EXPECT_EQ(step.size().value, 2u);
}

TEST(StepFields, ACopyIsDeep) {
  Step a;
  a.mutable_buffer().value = "A";
  a.mutable_graphs().push_back({"g", {}, true});
  a.mutable_keys().entries.push_back({"verify", {"host", {}, true}});
  Step b = a;
  b.mutable_buffer().value = "B";
  b.mutable_graphs()[0].value = "h";
  b.mutable_keys().entries[0].value.value = "device";
  EXPECT_EQ(a.buffer().value, "A");
  EXPECT_EQ(a.graphs()[0].value, "g");
  EXPECT_EQ(a.keys().entries[0].value.value, "host");
}

TEST(StepFields, TheParserStoresWhatTheFileSaysAndTheSchemasDefaults) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(R"(version: 1
name: fields
buffers: {A: {shape: [4]}}
steps:
  - {op: reserve, buffer: A, size: 2MiB}
  - {op: unmap, buffer: A, name: u}
)",
                                            "fields.yaml", &d);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d);
  const Step& reserve = s->steps[0];
  EXPECT_EQ(reserve.buffer().value, "A");
  EXPECT_TRUE(reserve.size().set);
  EXPECT_EQ(reserve.size().value, 2u << 20);
  EXPECT_EQ(reserve.size().loc.line, 5);
  EXPECT_FALSE(reserve.alloc().set);  // not a key of reserve
  const Step& unmap = s->steps[1];
  EXPECT_EQ(unmap.name.value, "u");
  EXPECT_TRUE(unmap.wait().value);  // the schema's default, written where the step is
  EXPECT_FALSE(unmap.wait().set);
  EXPECT_EQ(unmap.wait().loc.line, unmap.loc.line);
  EXPECT_FALSE(unmap.repeat().set);  // unmap takes no repeat
}

TEST(StepFields, RepeatAndFatalTakeNoRoomWhenAbsent) {
  // Most ops take repeat and fatal; absent, they read as their defaults' meaning (0: once; not
  // fatal) and are not stored, where other defaults are.
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(R"(version: 1
name: fields
buffers: {A: {shape: [4]}}
steps:
  - {op: reserve, buffer: A, size: 2MiB}
  - {op: fill, buffer: A, seed: 1}
  - {op: fill, buffer: A, seed: 1, repeat: 3}
  - {op: check_value, buffer: A, value: 0, fatal: true}
)",
                                            "fields.yaml", &d);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d);
  const Step& once = s->steps[1];
  EXPECT_FALSE(once.repeat().set);
  EXPECT_EQ(once.repeat().value, 0u);
  EXPECT_FALSE(once.fatal().value);
  EXPECT_EQ(s->steps[2].repeat().value, 3u);
  EXPECT_TRUE(s->steps[2].repeat().set);
  EXPECT_EQ(s->steps[2].repeat().loc.line, 7);
  EXPECT_TRUE(s->steps[3].fatal().value);
  EXPECT_TRUE(s->steps[3].fatal().set);
}

}  // namespace
}  // namespace vmm
