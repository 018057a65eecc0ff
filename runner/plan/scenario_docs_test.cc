// docs/scenario-language.md stays true: its example runs through the front end cleanly, and every
// op and field of the schema is documented in the op's own section.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/yaml/json_schema.h"

namespace vmm {
namespace {

std::string Doc() {
  std::ifstream in(std::string(VMMRUN_SOURCE_DIR) + "/docs/scenario-language.md");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ScenarioDocsTest, FirstExampleParsesAndPlansCleanly) {
  const std::string doc = Doc();
  const size_t heading = doc.find("## A first scenario");
  ASSERT_NE(heading, std::string::npos);
  const size_t begin = doc.find("```yaml\n", heading);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```\n", begin + 8);
  ASSERT_NE(end, std::string::npos);
  const std::string example = doc.substr(begin + 8, end - begin - 8);
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(example, "example.yaml", &d);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d);
  BuildPlan(*s, &d);
  EXPECT_EQ(FormatDiagnostics(d), "");
  EXPECT_GE(s->steps.size(), 10u);
  EXPECT_EQ(example.rfind("# yaml-language-server: $schema=../schemas/scenario.schema.json\n", 0),
            0u);
}

TEST(ScenarioDocsTest, EveryOpAndFieldIsDocumented) {
  const std::string doc = Doc();
  StatusOr<JsonSchema> schema = JsonSchema::Compile(ScenarioSchemaText());
  ASSERT_TRUE(schema.ok());
  const SchemaNode* steps = schema->Find("#/definitions/step")->Resolved();
  size_t op_rows = 0;  // the op table's rows written with `op:` (blocks are not)
  for (const OpInfo& info : AllOps()) op_rows += info.family != OpFamily::kBlock;
  ASSERT_EQ(steps->cases.size(), op_rows);
  for (const auto& [op, fields] : steps->cases) {
    const size_t at = doc.find("#### `" + op + "`\n");
    ASSERT_NE(at, std::string::npos) << op;
    const size_t next = doc.find("\n#### ", at + 1);
    const std::string section =
        doc.substr(at, next == std::string::npos ? std::string::npos : next - at);
    for (const auto& [key, p] : fields->Resolved()->properties) {
      if (key == "op" || key == "name") continue;
      EXPECT_NE(section.find("| `" + key + "` |"), std::string::npos) << op << "." << key;
    }
  }
  for (const auto& [key, p] : schema->root().properties)
    EXPECT_NE(doc.find("| `" + key + "` |"), std::string::npos) << key;
}

// The isolate block has its own section, with a row for each of its keys and of its `isolate:`.
TEST(ScenarioDocsTest, TheIsolateBlockIsDocumented) {
  const std::string doc = Doc();
  StatusOr<JsonSchema> schema = JsonSchema::Compile(ScenarioSchemaText());
  ASSERT_TRUE(schema.ok());
  const size_t at = doc.find("#### `isolate`\n");
  ASSERT_NE(at, std::string::npos);
  const std::string section = doc.substr(at, doc.find("\n## ", at) - at);
  for (const char* pointer : {"#/definitions/isolate_block", "#/definitions/isolate"}) {
    for (const auto& [key, p] : schema->Find(pointer)->Resolved()->properties) {
      if (key == "name") continue;
      EXPECT_NE(section.find("| `" + key + "` |"), std::string::npos) << pointer << " " << key;
    }
  }
}

// The together group has its own section, with a row for each of its keys.
TEST(ScenarioDocsTest, TheTogetherGroupIsDocumented) {
  const std::string doc = Doc();
  StatusOr<JsonSchema> schema = JsonSchema::Compile(ScenarioSchemaText());
  ASSERT_TRUE(schema.ok());
  const size_t at = doc.find("#### `together`\n");
  ASSERT_NE(at, std::string::npos);
  const std::string section = doc.substr(at, doc.find("\n## ", at) - at);
  for (const auto& [key, p] : schema->Find("#/definitions/together_group")->Resolved()->properties)
    EXPECT_NE(section.find("| `" + key + "` |"), std::string::npos) << key;
  // Its example is a scenario's steps that validate (with the declarations they need).
  const size_t begin = section.find("```yaml\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = section.find("```\n", begin + 8);
  std::string example =
      "name: doc_together\nbuffers: {A: {shape: [2097152]}, B: {shape: [2097152]}}\n"
      "views:\n";
  for (int i = 0; i < 4; ++i) {
    example += "  A" + std::to_string(i) + ": {of: A, offset: " + std::to_string(2 * i) +
               "MiB, shape: [524288]}\n  B" + std::to_string(i) +
               ": {of: B, offset: " + std::to_string(2 * i) + "MiB, shape: [524288]}\n";
  }
  example +=
      "steps:\n  - {op: create, alloc: p, size: 8MiB, handle_types: [posix_fd]}\n"
      "  - {op: reserve, buffer: A}\n  - {op: map, buffer: A, alloc: p}\n"
      "  - {op: set_access, buffer: A}\n";
  std::istringstream lines(section.substr(begin + 8, end - begin - 8));
  for (std::string line; std::getline(lines, line);) example += "  " + line + "\n";
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(example, "example.yaml", &d);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d) << example;
  BuildPlan(*s, &d);
  EXPECT_EQ(FormatDiagnostics(d), "") << example;
}

}  // namespace
}  // namespace vmm
