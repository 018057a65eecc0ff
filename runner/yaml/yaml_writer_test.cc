#include "runner/yaml/yaml_writer.h"

#include <gtest/gtest.h>

#include "runner/yaml/yaml_loader.h"

namespace vmm {
namespace {

YamlValue Load(const std::string& text) {
  std::vector<Diagnostic> d;
  std::optional<YamlValue> v = LoadYaml(text, "t.yaml", &d);
  EXPECT_TRUE(v.has_value()) << FormatDiagnostics(d);
  return v.value_or(YamlValue{});
}

TEST(YamlWriter, TopLevelBlockStepsOnePerLine) {
  const std::string text =
      "name: x\n"
      "buffers:\n"
      "  A: {shape: [256, 256]}\n"
      "steps:\n"
      "  - {op: reserve, buffer: A}\n"
      "  - {op: capture, graph: g, steps: [{op: fill, buffer: A, seed: 1}]}\n"
      "empty: []\n";
  EXPECT_EQ(WriteYaml(Load(text)), text);
}

TEST(YamlWriter, QuotesWhatWouldReadDifferently) {
  EXPECT_EQ(YamlScalarText("C = A·B 3", false), "C = A·B 3");
  EXPECT_EQ(YamlScalarText("a, b", false), "\"a, b\"");
  EXPECT_EQ(YamlScalarText("key: v", false), "\"key: v\"");
  EXPECT_EQ(YamlScalarText("x #y", false), "\"x #y\"");
  EXPECT_EQ(YamlScalarText("", false), "\"\"");
  EXPECT_EQ(YamlScalarText("- a", false), "\"- a\"");
  EXPECT_EQ(YamlScalarText("-5", false), "-5");
  EXPECT_EQ(YamlScalarText("true", true), "\"true\"");
  EXPECT_EQ(YamlScalarText("12", true), "\"12\"");
  EXPECT_EQ(YamlScalarText("12", false), "12");
  EXPECT_EQ(YamlScalarText("say \"hi\"\n", false), "\"say \\\"hi\\\"\\n\"");
}

TEST(YamlWriter, RoundTrips) {
  const std::string text =
      "name: \"a: b\"\n"
      "description: \"line\\none\"\n"
      "steps:\n"
      "  - {op: map, name: \"x, y\", buffer: A, alloc: p1, offset: 2MiB}\n";
  const std::string written = WriteYaml(Load(text));
  EXPECT_EQ(written, text);
  EXPECT_EQ(WriteYaml(Load(written)), written);
}

}  // namespace
}  // namespace vmm
