#include "runner/report/diff_config_parse.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

// Parses `text` as "ci.yaml" and returns all diagnostics, one per line.
std::string Errors(const std::string& text) {
  std::vector<Diagnostic> d;
  std::optional<report::DiffConfig> c = ParseDiffConfig(text, "ci.yaml", &d);
  EXPECT_EQ(c.has_value(), d.empty());
  return FormatDiagnostics(d);
}

report::DiffConfig Parse(const std::string& text) {
  std::vector<Diagnostic> d;
  std::optional<report::DiffConfig> c = ParseDiffConfig(text, "ci.yaml", &d);
  EXPECT_TRUE(c.has_value()) << FormatDiagnostics(d);
  return c.value_or(report::DiffConfig{});
}

bool operator==(const report::TimingThreshold& a, const report::TimingThreshold& b) {
  return a.enabled == b.enabled && a.single_runs == b.single_runs && a.relative == b.relative &&
         a.floor_us == b.floor_us && a.spread_factor == b.spread_factor;
}

TEST(DiffConfigParseTest, EmptyFileIsTheDefaults) {
  const report::DiffConfig c = Parse("# nothing but a comment\n");
  EXPECT_TRUE(c.timing == report::TimingThreshold{});
  EXPECT_TRUE(c.timing.enabled);
  EXPECT_FALSE(c.timing.single_runs);
  EXPECT_EQ(c.timing.relative, 0.25);
  EXPECT_EQ(c.timing.floor_us, 5);
  EXPECT_EQ(c.timing.spread_factor, 3);
  EXPECT_TRUE(c.metrics.empty());
  EXPECT_FALSE(c.ignore_device);
}

TEST(DiffConfigParseTest, ReadsEveryKeyAndInheritsIntoMetrics) {
  const report::DiffConfig c = Parse(
      "version: 1\n"
      "timing:\n"
      "  relative: 0.5\n"
      "  floor_us: 10\n"
      "  spread_factor: 0\n"
      "  single_runs: true\n"
      "  metrics:\n"
      "    gpu_us: {relative: 0.1, floor_us: 2.5}\n"
      "    wall_us: {enabled: false}\n"
      "ignore_device: true\n");
  EXPECT_TRUE(
      (c.timing == report::TimingThreshold{
                       .single_runs = true, .relative = 0.5, .floor_us = 10, .spread_factor = 0}));
  ASSERT_EQ(c.metrics.size(), 2u);
  EXPECT_TRUE((c.ThresholdFor("gpu_us") ==
               report::TimingThreshold{
                   .single_runs = true, .relative = 0.1, .floor_us = 2.5, .spread_factor = 0}));
  EXPECT_TRUE((c.ThresholdFor("wall_us") == report::TimingThreshold{.enabled = false,
                                                                    .single_runs = true,
                                                                    .relative = 0.5,
                                                                    .floor_us = 10,
                                                                    .spread_factor = 0}));
  EXPECT_TRUE(c.ignore_device);
}

TEST(DiffConfigParseTest, TimingCanBeSwitchedOff) {
  const report::DiffConfig c = Parse("timing: {enabled: false}\n");
  EXPECT_FALSE(c.ThresholdFor("wall_us").enabled);
  EXPECT_FALSE(c.ThresholdFor("gpu_us").enabled);
}

TEST(DiffConfigParseTest, UnknownKeysWithSuggestions) {
  EXPECT_EQ(
      Errors("timing:\n  floor: 3\n  metrics:\n    gpu: {}\nignore_devices: true\n"),
      "ci.yaml:2:3: error: unknown key 'floor' in timing; allowed keys: enabled, single_runs, "
      "relative, floor_us, spread_factor, metrics\n"
      "ci.yaml:4:5: error: unknown key 'gpu' in metrics; allowed keys: wall_us, gpu_us\n"
      "ci.yaml:5:1: error: unknown key 'ignore_devices' at the top level, did you mean "
      "'ignore_device'?\n");
}

TEST(DiffConfigParseTest, TypesAndRanges) {
  EXPECT_EQ(Errors("timing:\n  relative: -1\n  enabled: maybe\n  floor_us: 5us\n"),
            "ci.yaml:2:13: error: 'relative' must be at least 0, got '-1'\n"
            "ci.yaml:3:12: error: 'enabled' must be true or false, got 'maybe'\n"
            "ci.yaml:4:13: error: 'floor_us' must be a number, got '5us'\n");
  EXPECT_EQ(Errors("version: 2\n"), "ci.yaml:1:10: error: 'version' must be 1, got '2'\n");
  EXPECT_EQ(Errors("- a list\n"), "ci.yaml:1:1: error: the top level must be a map, got a list\n");
}

TEST(DiffConfigParseTest, YamlErrorsAndDuplicates) {
  EXPECT_EQ(Errors("timing: {relative: 0.1\n"),
            "ci.yaml:2:1: error: invalid YAML: end of map flow not found\n");
  EXPECT_EQ(Errors("ignore_device: true\nignore_device: false\n"),
            "ci.yaml:2:1: error: duplicate key 'ignore_device' (first at line 1, column 1)\n");
}

TEST(DiffConfigParseTest, MissingFile) {
  std::vector<Diagnostic> d;
  EXPECT_FALSE(LoadDiffConfigFile("/nonexistent/ci.yaml", &d).has_value());
  EXPECT_EQ(FormatDiagnostics(d),
            "/nonexistent/ci.yaml: error: cannot read the file: No such file or directory\n");
}

}  // namespace
}  // namespace vmm
