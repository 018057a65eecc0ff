// The record tables (record_fields.h) against schemas/report.schema.json: each table names exactly
// the keys of its object in the schema, the ones the schema requires are the ones written always,
// and every field's description starts with the table's stability word. A field added to one and
// not the other fails here.
#include "runner/report/record_fields.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "runner/report/diff.h"
#include "runner/report/report_io.h"
#include "runner/report/report_test_util.h"

namespace vmm::report::fields {
namespace {

Json Schema() {
  return Json::parse(
      testutil::ReadAll(std::string(VMMRUN_SOURCE_DIR) + "/schemas/report.schema.json"));
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

// Changes the leaf value at `value` into another of its kind: a string gets a character more (a
// decimal string, one more; an enum, its next choice), an integer one more, a bool flips. False
// for objects and lists.
bool Perturb(Json& value, const char* choices) {
  if (value.is_boolean()) {
    value = !value.get<bool>();
  } else if (value.is_number_integer()) {
    value = value.get<int64_t>() + 1;
  } else if (value.is_string() && choices != nullptr) {
    const std::string all = std::string(choices) + ", ", now = value.get<std::string>();
    const size_t at = all.find(now + ", ");
    const size_t next = at == std::string::npos ? 0 : at + now.size() + 2;
    value = all.substr(next < all.size() ? next : 0, all.find(", ", next < all.size() ? next : 0) -
                                                         (next < all.size() ? next : 0));
  } else if (value.is_string()) {
    const std::string text = value.get<std::string>();
    const bool decimal = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    value = decimal ? std::to_string(std::stoull(text) + 1) : text + "~";
  } else {
    return false;
  }
  return true;
}

// The keys (as "<where>.<key>") of the STABLE leaf fields of `table` whose change, made in each
// object `objects` finds in the sample report's JSON in turn, never gives `vmm-run diff` a row.
template <typename R>
void UncomparedStableFields(std::span<const Field<R>> table, const std::string& where,
                            const std::function<std::vector<Json*>(Json&)>& objects,
                            std::set<std::string>* out, std::set<std::string>* unexercised) {
  const Report base = testutil::SampleReport();
  const Json json = Json::parse(ReportToJson(base));
  for (const Field<R>& f : table) {
    // A changed schema_version is refused by the reader before any diff.
    if (f.stability != Stability::kStable || std::string(f.key) == "schema_version") continue;
    bool leaf = false, compared = false;
    Json copy = json;
    const size_t n = objects(copy).size();
    for (size_t i = 0; i < n && !compared; ++i) {
      Json changed = json;
      Json* object = objects(changed)[i];
      if (!object->contains(f.key) || !Perturb((*object)[f.key], f.choices)) continue;
      leaf = true;
      StatusOr<Report> now = ParseReportJson(changed.dump(), "changed.json");
      ASSERT_TRUE(now.ok()) << where << "." << f.key << ": " << now.status().message();
      DiffResult result;
      DiffReports(base, *now, DiffConfig{}, &result);
      compared = !result.rows.empty();
    }
    if (leaf && !compared) out->insert(where + "." + f.key);
    if (!leaf) unexercised->insert(where + "." + f.key);
  }
}

// The diff compares what the tables call STABLE, except the fields named here (each for its
// reason, docs/diffing.md): a STABLE field the diff starts or stops comparing changes this list.
TEST(RecordFields, TheDiffComparesEveryStableFieldButTheseNamed) {
  std::set<std::string> uncompared, unexercised;
  auto steps = [](Json& j) {
    std::vector<Json*> out;
    for (Json& s : j["steps"]) out.push_back(&s);
    return out;
  };
  auto checks = [](Json& j) {
    std::vector<Json*> out;
    for (Json& s : j["steps"])
      if (s.contains("check")) out.push_back(&s["check"]);
    return out;
  };
  auto at = [](const char* key) {
    return [key](Json& j) {
      return key == nullptr ? std::vector<Json*>{&j} : std::vector<Json*>{&j[key]};
    };
  };
  UncomparedStableFields(StepFields(), "step", steps, &uncompared, &unexercised);
  UncomparedStableFields(CheckFields(), "check", checks, &uncompared, &unexercised);
  UncomparedStableFields(SummaryFields(), "summary", at("summary"), &uncompared, &unexercised);
  UncomparedStableFields(DeviceFields(), "device", at("device"), &uncompared, &unexercised);
  UncomparedStableFields(ReportFields(), "report", at(nullptr), &uncompared, &unexercised);
  for (const char* group : {"scenario", "backend"}) {
    for (const Field<Report>& f : ReportFields()) {
      if (f.group != nullptr && std::string(f.key) == group)
        UncomparedStableFields(f.group(), group, at(group), &uncompared, &unexercised);
    }
  }
  const std::set<std::string> expected = {
      // Totals of the steps, which the diff compares one by one.
      "summary.steps", "summary.ok", "summary.failed", "summary.skipped", "summary.unchecked",
      "summary.checks_passed", "summary.checks_failed", "summary.exit_code", "summary.failed_step",
      "summary.result",
      // The key that pairs two reports (DiffPaths); two files given by name are one pair.
      "scenario.name",
      // Facts of the device, which device.name stands for in the comparison.
      "device.compute_capability", "device.vmm_supported", "device.granularity_min_bytes",
      "device.granularity_recommended_bytes"};
  EXPECT_EQ(uncompared, expected);
  // STABLE fields this test does not reach: records or lists (their own tables hold leaves the
  // diff compares through a summary of them, docs/diffing.md), or keys the sample report lacks.
  // A new STABLE field lands here until the sample has it.
  const std::set<std::string> not_reached = {
      "check.device_fact",   "check.mismatches",       "report.sweep_point",  "report.vars",
      "step.actual_error",   "step.expected_error",    "summary.interrupted", "summary.signal",
      "summary.skip_reason", "summary.stopped_at_step"};
  EXPECT_EQ(unexercised, not_reached);
}

}  // namespace
}  // namespace vmm::report::fields
