// The bad-input corpus: tests/bad_inputs/NAME.yaml must produce exactly NAME.expected (every
// diagnostic, one per line, with the file written as tests/bad_inputs/NAME.yaml). Also checks that
// every reference scenario parses and plans cleanly, and that the schema validator agrees with
// valijson (the reference implementation) on which documents are schema-valid.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/yaml/schema_validator.h"
#include "runner/yaml/valijson_oracle.h"
#include "runner/yaml/yaml_loader.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = VMMRUN_SOURCE_DIR;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Names(const fs::path& dir, const std::string& ext) {
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.path().extension() == ext) out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Parse + plan diagnostics for `text`, as the CLI prints them (schema and state errors in one
// pass: partial_scenario.h).
std::string Check(const std::string& text, const std::string& file) {
  std::vector<Diagnostic> d;
  PartialScenario partial;
  ExpandOptions options;  // device facts as a 16 GiB device would give them, where named
  if (MentionsDeviceFacts(text))
    options.facts = {{"device_memory", ExprValue::Number(int64_t{16} << 30)},
                     {"device_free", ExprValue::Number(int64_t{16} << 30)}};
  std::optional<Scenario> s = ParseScenario(text, file, options, &d, nullptr, &partial);
  if (s) BuildPlan(*s, &d);
  AddStateErrors(partial, &d);
  return FormatDiagnostics(d);
}

TEST(BadInputsTest, EveryCaseHasItsExpectedText) {
  const std::vector<std::string> yaml = Names(kRoot / "tests/bad_inputs", ".yaml");
  const std::vector<std::string> expected = Names(kRoot / "tests/bad_inputs", ".expected");
  EXPECT_EQ(yaml, expected);
  EXPECT_GE(yaml.size(), 34u);
}

TEST(BadInputsTest, DiagnosticsMatchExactly) {
  for (const std::string& name : Names(kRoot / "tests/bad_inputs", ".yaml")) {
    const std::string file = "tests/bad_inputs/" + name + ".yaml";
    const std::string want = ReadFile(kRoot / "tests/bad_inputs" / (name + ".expected"));
    const std::string got = Check(ReadFile(kRoot / file), file);
    EXPECT_FALSE(got.empty()) << name;
    EXPECT_EQ(got, want) << name;
  }
}

TEST(ReferenceScenariosTest, ParseAndPlanWithoutDiagnostics) {
  const std::vector<std::string> names = Names(kRoot / "scenarios", ".yaml");
  EXPECT_FALSE(names.empty());
  for (const std::string& name : names) {
    const std::string file = "scenarios/" + name + ".yaml";
    EXPECT_EQ(Check(ReadFile(kRoot / file), file), "") << file;
  }
}

// valijson 1.0's yaml-cpp adapter reads maps and lists as strings (fixed upstream in valijson PR
// #185), so it accepts these; SchemaValidator rightly does not.
const std::set<std::string> kValijsonAcceptsMapsAsStrings = {"version_and_top_level_types",
                                                             "wrong_types"};

TEST(SchemaOracleTest, ValijsonAgreesOnWhatIsSchemaValid) {
  StatusOr<ValijsonOracle> oracle = ValijsonOracle::Create(ScenarioSchemaText());
  ASSERT_TRUE(oracle.ok()) << oracle.status().message();
  StatusOr<ScenarioParser> parser = ScenarioParser::Create();
  ASSERT_TRUE(parser.ok());
  std::vector<std::pair<std::string, std::string>> files;  // name, path
  for (const std::string& n : Names(kRoot / "tests/bad_inputs", ".yaml"))
    files.emplace_back(n, "tests/bad_inputs/" + n + ".yaml");
  for (const std::string& n : Names(kRoot / "scenarios", ".yaml"))
    files.emplace_back(n, "scenarios/" + n + ".yaml");
  int compared = 0;
  for (const auto& [name, file] : files) {
    const std::string text = ReadFile(kRoot / file);
    std::vector<Diagnostic> load;
    std::optional<YamlValue> doc = LoadYaml(text, file, &load);
    if (!doc || !load.empty() || IsBlankYaml(text)) continue;  // not a schema question
    std::vector<Diagnostic> ours;
    parser->validator().Validate(*doc, file, &ours);
    const std::vector<Diagnostic> theirs = oracle->Validate(text, file);
    ++compared;
    if (kValijsonAcceptsMapsAsStrings.count(name) != 0 && theirs.empty()) continue;
    EXPECT_EQ(ours.empty(), theirs.empty()) << file << "\nours:\n"
                                            << FormatDiagnostics(ours) << "valijson:\n"
                                            << FormatDiagnostics(theirs);
  }
  EXPECT_GE(compared, 30);
}

}  // namespace
}  // namespace vmm
