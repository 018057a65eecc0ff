#include "runner/scenario/parse.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace vmm {
namespace {

// Parses `text` as "t.yaml" and returns all diagnostics, one per line.
std::string Errors(const std::string& text) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(text, "t.yaml", &d);
  EXPECT_EQ(s.has_value(), d.empty());
  return FormatDiagnostics(d);
}

Scenario Parse(const std::string& text) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(text, "t.yaml", &d);
  EXPECT_TRUE(s.has_value()) << FormatDiagnostics(d);
  return s.value_or(Scenario{});
}

TEST(ParseScenarioTest, BuildsTypedTreeWithLocationsAndDefaults) {
  const Scenario s = Parse(
      "name: demo\n"
      "buffers:\n"
      "  A: {shape: [256, 256]}\n"
      "steps:\n"
      "  - {op: reserve, buffer: A, size: 4MiB}\n"
      "  - op: set_access\n"
      "    buffer: A\n"
      "  - {op: update, name: up · date, exec: e, graph: g, repeat: 3}\n");
  EXPECT_EQ(s.name, "demo");
  EXPECT_EQ(s.file, "t.yaml");
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.granularity.value, kDefaultGranularity);
  EXPECT_FALSE(s.granularity.set);
  ASSERT_EQ(s.buffers.size(), 1u);
  EXPECT_EQ(s.buffers[0].name, "A");
  EXPECT_EQ(s.buffers[0].shape, (std::vector<uint64_t>{256, 256}));
  EXPECT_EQ(s.buffers[0].dtype, "f32");
  EXPECT_EQ(s.buffers[0].loc.line, 3);
  ASSERT_EQ(s.steps.size(), 3u);
  const Step& reserve = s.steps[0];
  EXPECT_EQ(reserve.op, Op::kReserve);
  EXPECT_EQ(reserve.loc.line, 5);
  EXPECT_EQ(reserve.loc.column, 5);
  EXPECT_EQ(reserve.size().value, 4u << 20);
  EXPECT_TRUE(reserve.size().set);
  EXPECT_EQ(reserve.size().loc.column, 36);
  EXPECT_EQ(reserve.alignment().value, 0u);  // schema default
  EXPECT_FALSE(reserve.alignment().set);
  EXPECT_EQ(reserve.alignment().loc.line, 5);  // absent: the step's map
  const Step& access = s.steps[1];
  EXPECT_EQ(access.access().value, "read_write");
  EXPECT_FALSE(access.access().set);
  EXPECT_EQ(access.buffer().loc.line, 7);
  EXPECT_EQ(access.buffer().loc.column, 13);
  const Step& update = s.steps[2];
  EXPECT_EQ(update.name.value, "up · date");
  EXPECT_EQ(update.expect().value, "success");
  EXPECT_EQ(update.repeat().value, 3u);
  EXPECT_FALSE(update.fatal().value);
}

TEST(ParseScenarioTest, CaptureBodyAndLists) {
  const Scenario s = Parse(
      "name: x\n"
      "steps:\n"
      "  - op: capture\n"
      "    graph: g\n"
      "    steps:\n"
      "      - {op: fill, buffer: A, seed: 7}\n"
      "      - {op: matmul, a: A, b: B, c: C}\n"
      "  - {op: check_address, of: [r1, r2], expect: different}\n"
      "  - {op: check_kernel_params, graphs: [g, h]}\n");
  ASSERT_EQ(s.steps[0].steps.size(), 2u);
  EXPECT_EQ(s.steps[0].steps[0].seed().value, 7u);
  EXPECT_EQ(s.steps[0].steps[1].c().value, "C");
  ASSERT_EQ(s.steps[1].of().size(), 2u);
  EXPECT_EQ(s.steps[1].of()[1].value, "r2");
  EXPECT_EQ(s.steps[1].of()[1].loc.column, 34);
  EXPECT_EQ(s.steps[2].expect().value, "identical");
  EXPECT_EQ(s.steps[2].graphs()[0].value, "g");
}

TEST(ParseScenarioTest, SizesTakeBinaryUnits) {
  const Scenario s = Parse(
      "name: x\n"
      "granularity: 64 KiB\n"
      "steps:\n"
      "  - {op: create, alloc: a, size: 4096}\n"
      "  - {op: create, alloc: b, size: 3GiB}\n"
      "  - {op: create, alloc: c, size: 1TiB}\n");
  EXPECT_EQ(s.granularity.value, 64u << 10);
  EXPECT_TRUE(s.granularity.set);
  EXPECT_EQ(s.steps[0].size().value, 4096u);
  EXPECT_EQ(s.steps[1].size().value, 3ull << 30);
  EXPECT_EQ(s.steps[2].size().value, 1ull << 40);
}

TEST(ParseScenarioTest, ReportsEveryMistakeInFileOrder) {
  EXPECT_EQ(Errors("name: x\n"
                   "steps:\n"
                   "  - {op: reserve, buffer: A, sizee: 2MiB}\n"
                   "  - {op: map, buffer: A}\n"
                   "  - {op: fill, buffer: A, seed: abc}\n"
                   "  - {op: create, alloc: p, size: 2MB}\n"),
            "t.yaml:3:30: error: unknown key 'sizee' in step 'reserve', did you mean 'size'?\n"
            "t.yaml:4:5: error: step 'map' needs key 'alloc'\n"
            "t.yaml:5:33: error: 'seed' must be an integer, got 'abc'\n"
            "t.yaml:6:34: error: 'size' must be a size such as 2MiB or 4096, got '2MB'; did you "
            "mean '2MiB'?\n");
}

TEST(ParseScenarioTest, SizeOverflowIsReportedAfterTheSchema) {
  EXPECT_EQ(Errors("name: x\nsteps:\n  - {op: create, alloc: p, size: 99999999TiB}\n"),
            "t.yaml:3:34: error: 'size' is too large: '99999999TiB' does not fit in 64 bits\n");
}

TEST(ParseScenarioTest, AnUnquotedCommaInAFlowMapGetsAHintToQuote) {
  EXPECT_EQ(Errors("name: x\nsteps:\n  - {op: fill, buffer: A, seed: 1, name: a, b}\n"),
            "t.yaml:3:45: error: unknown key 'b' in step 'fill': a comma ends a value in `{...}`, "
            "so 'name: a, b' was read as 'name: a' and a key 'b'; if the comma belongs to the "
            "value, quote it: name: \"a, b\"\n");
  // Quoted, the comma is part of the name.
  EXPECT_EQ(Errors("name: x\nsteps:\n  - {op: fill, buffer: A, seed: 1, name: \"a, b\"}\n"), "");
}

TEST(ParseScenarioTest, TextThatIsNotUtf8IsRefusedAtItsFirstBadByte) {
  EXPECT_EQ(Errors("name: x\nsteps:\n  - {op: fill, buffer: A, name: caf\xc3\xa9 \xff}\n"),
            "t.yaml:3:38: error: the file is not valid UTF-8 (byte 0xff); save the scenario as "
            "UTF-8\n");
  EXPECT_EQ(Errors("name: \xe9t\xe9\n"),  // Latin-1
            "t.yaml:1:7: error: the file is not valid UTF-8 (byte 0xe9); save the scenario as "
            "UTF-8\n");
}

TEST(ParseScenarioTest, EmptyAndNonMapFiles) {
  EXPECT_EQ(Errors("# nothing\n\n"),
            "t.yaml:1:1: error: the file is empty; a scenario needs at least 'name' and 'steps'\n");
  EXPECT_EQ(Errors(""),
            "t.yaml:1:1: error: the file is empty; a scenario needs at least 'name' and 'steps'\n");
  EXPECT_EQ(Errors("- a\n"),
            "t.yaml:1:1: error: the top level must be a map with keys 'name' and 'steps', got a "
            "list\n");
}

TEST(LoadScenarioFileTest, ReadsScenarios) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s =
      LoadScenarioFile(std::string(VMMRUN_SOURCE_DIR) + "/scenarios/reuse.yaml", &d);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d);
  EXPECT_EQ(s->name, "reuse");
}

TEST(LoadScenarioFileTest, UnreadableFileIsOneDiagnostic) {
  std::vector<Diagnostic> d;
  EXPECT_FALSE(LoadScenarioFile("/nonexistent/x.yaml", &d).has_value());
  EXPECT_EQ(FormatDiagnostics(d),
            "/nonexistent/x.yaml: error: cannot read the file: No such file or directory\n");
}

TEST(LoadScenarioFileTest, DirectoryIsOneDiagnostic) {
  std::vector<Diagnostic> d;
  const std::string dir = std::string(VMMRUN_SOURCE_DIR) + "/scenarios";
  EXPECT_FALSE(LoadScenarioFile(dir, &d).has_value());
  EXPECT_EQ(FormatDiagnostics(d),
            dir + ": error: cannot read the file: it is a directory; expected a regular file\n");
}

TEST(DescribeStepTest, GeneratedFromSchema) {
  std::string error;
  const std::string reserve = DescribeStep("reserve", &error);
  EXPECT_EQ(error, "");
  EXPECT_NE(reserve.find("reserve: Reserve a virtual address range"), std::string::npos);
  const size_t alignment = reserve.find("\n  alignment ");
  ASSERT_NE(alignment, std::string::npos) << reserve;
  EXPECT_EQ(reserve.find("size, default 0\n", alignment), reserve.find('\n', alignment + 1) - 15)
      << reserve;
  const size_t expect_error = reserve.find("\n  expect_error ");
  ASSERT_NE(expect_error, std::string::npos) << reserve;
  EXPECT_EQ(reserve.find("string, optional\n", expect_error),
            reserve.find('\n', expect_error + 1) - 16)
      << reserve;
  EXPECT_NE(DescribeStep("set_access", &error)
                .find("read_write | read | none, or a map device -> access, default read_write"),
            std::string::npos);
  EXPECT_EQ(DescribeStep("reserv", &error), "");
  EXPECT_EQ(error, "unknown op 'reserv', did you mean 'reserve'?");
}

TEST(DescribeStepsTest, ListsEveryOp) {
  const std::string all = DescribeSteps();
  for (const char* op :
       {"reserve",     "free",         "create",      "release",       "map",
        "set_access",  "unmap",        "fill",        "matmul",        "capture",
        "instantiate", "replay",       "update",      "destroy_graph", "destroy_exec",
        "snapshot",    "check_matmul", "check_equal", "check_address", "check_kernel_params",
        "synchronize"}) {
    std::string heading = "\n";
    heading += op;
    heading += ": ";
    EXPECT_NE(all.find(heading), std::string::npos) << op;
  }
}

}  // namespace
}  // namespace vmm
