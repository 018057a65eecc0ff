// The record tables (record_fields.h) against schemas/report.schema.json: each table names exactly
// the keys of its object in the schema, the ones the schema requires are the ones written always,
// and every field's description starts with the table's stability word. A field added to one and
// not the other fails here.
#include "runner/report/record_fields.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace vmm::report::fields {
namespace {

Json Schema() {
  std::ifstream in(std::string(VMMRUN_SOURCE_DIR) + "/schemas/report.schema.json");
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

// Compares `table` with the schema object at `pointer`.
template <typename R>
void ExpectTableIsTheSchemas(std::span<const Field<R>> table, const Json& schema,
                             const std::string& pointer) {
  SCOPED_TRACE(pointer);
  const Json& object = schema.at(Json::json_pointer(pointer));
  std::set<std::string> in_schema, required_in_schema, in_table, always_in_table;
  for (const auto& [key, property] : object.at("properties").items()) in_schema.insert(key);
  for (const Json& key : object.at("required")) required_in_schema.insert(key.get<std::string>());
  for (const Field<R>& f : table) {
    in_table.insert(f.key);
    if (f.written == nullptr) always_in_table.insert(f.key);
    const Json& property = object.at("properties").value(f.key, Json::object());
    const std::string description = property.value("description", "");
    const std::string word = std::string(StabilityWord(f.stability)) + ".";
    EXPECT_EQ(description.substr(0, word.size()), word)
        << "'" << f.key << "': the table says " << word << " the schema's description begins '"
        << description.substr(0, 20) << "'";
  }
  for (const Field<R>& f : table)
    if (f.group != nullptr)
      ExpectTableIsTheSchemas(f.group(), schema, pointer + "/properties/" + f.key);
  EXPECT_EQ(in_table, in_schema) << "the keys of the table and of the schema";
  EXPECT_EQ(always_in_table, required_in_schema)
      << "the keys written always (table) and required (schema)";
}

TEST(RecordFields, EveryTableIsItsObjectInTheSchema) {
  const Json schema = Schema();
  ExpectTableIsTheSchemas(StepFields(), schema, "/definitions/step");
  ExpectTableIsTheSchemas(CheckFields(), schema, "/definitions/check");
  ExpectTableIsTheSchemas(MismatchFields(), schema,
                          "/definitions/check/properties/mismatches/items");
  ExpectTableIsTheSchemas(StatsFields(), schema, "/definitions/stats");
  ExpectTableIsTheSchemas(ChildFields(), schema, "/definitions/child");
  ExpectTableIsTheSchemas(FoldFields(), schema, "/definitions/step/properties/folded");
  ExpectTableIsTheSchemas(SummaryFields(), schema, "/properties/summary");
  ExpectTableIsTheSchemas(ReportFields(), schema, "");  // and its groups: tool, scenario, backend
  ExpectTableIsTheSchemas(DeviceFields(), schema, "/properties/device");
  ExpectTableIsTheSchemas(ScenarioDeviceFields(), schema, "/properties/devices/items");
  ExpectTableIsTheSchemas(BufferFields(), schema, "/properties/buffers/items");
  ExpectTableIsTheSchemas(GraphFields(), schema, "/definitions/graph");
  ExpectTableIsTheSchemas(GraphNodeFields(), schema, "/definitions/graph_node");
}

// A row written only with another (`with`) is required by the reader once that one is there: a
// report with expected_error and no actual_error is refused, naming the missing key.
TEST(RecordFields, AFieldWrittenWithAnotherIsRequiredWithIt) {
  Json step = Write(StepFields(), StepRecord{});
  step["expected_error"] = "CUDA_ERROR_INVALID_VALUE";
  FieldReader r("r.json");
  StepRecord back;
  Read(StepFields(), r, step, "/steps/0", back);
  ASSERT_EQ(r.errors().size(), 1u);
  EXPECT_EQ(r.errors()[0], "r.json: /steps/0: missing required key 'actual_error'");
  EXPECT_EQ(back.expected_error, "CUDA_ERROR_INVALID_VALUE");
}

}  // namespace
}  // namespace vmm::report::fields
