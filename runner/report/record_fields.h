// The report, field by field. Each field of the report and of its records (Report, StepRecord,
// CheckRecord, Mismatch, TimingStats, FoldRecord, ChildRecord, Summary, DeviceRecord, BufferRecord,
// GraphRecord, GraphNodeRecord) is one row of its record's table (record_fields.cc): its JSON key,
// its stability, when it is written, and how it is written and read. The writer
// (StreamReportJson, StepToJson), the reader (ParseReportJson, StepFromJson) and the schema test
// (record_fields_test.cc: each table and its object in schemas/report.schema.json name the same
// keys, the same required ones and the same stability) all walk these tables, so a new field is
// one row. Internal to runner/report.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "runner/report/field_reader.h"
#include "runner/report/report.h"

namespace vmm::report::fields {

using Json = nlohmann::ordered_json;

// How `vmm-run diff` treats a field (docs/diffing.md); the schema's description of the field starts
// with its word ("STABLE.", ...), and the schema test holds the two to each other.
enum class Stability {
  kStable,         // the same on every run of the scenario (the diff compares most of these:
                   // RecordFields.TheDiffComparesEveryStableFieldButTheseNamed names the rest)
  kNoisy,          // a timing: compared against a noise threshold, when at all
  kVolatile,       // differs from run to run (addresses, pids, lines): never compared
  kInformational,  // for people and tools (timeline), never compared
  kMixed,          // a record or map whose members say (check, body, details: "_hash" keys)
};
const char* StabilityWord(Stability s);  // "STABLE", "NOISY", "VOLATILE", "INFORMATIONAL", "MIXED"

template <typename R>
struct Field {
  const char* key;
  Stability stability;
  // nullptr: written always, and the reader requires it. Else written when it returns true; the
  // reader reads the field when present, and requires it when the key `with` is present (a field
  // written together with another) or when the key `without` is absent (one of two).
  bool (*written)(const R&) = nullptr;
  const char* with = nullptr;
  const char* without = nullptr;
  void (*write)(const R&, const char* key, Json& object) = nullptr;
  void (*read)(FieldReader&, const Json& object, const std::string& pointer, const Field& field,
               R&) = nullptr;
  int64_t min = INT64_MIN, max = INT64_MAX;  // integers: the range the reader accepts
  const char* choices = nullptr;             // enums: the names, for the reader's message
  // Lists of records: how many, and element i as JSON, so that a writer can stream them.
  size_t (*count)(const R&) = nullptr;
  Json (*element)(const R&, size_t i) = nullptr;
  // A nested object whose rows are fields of R itself (the report's "tool": {name, version, ...}).
  std::span<const Field> (*group)() = nullptr;
};

// The tables, in the order the writer writes the keys.
std::span<const Field<TimingStats>> StatsFields();
std::span<const Field<FoldRecord>> FoldFields();
std::span<const Field<Mismatch>> MismatchFields();
std::span<const Field<CheckRecord>> CheckFields();
std::span<const Field<ChildRecord>> ChildFields();
std::span<const Field<StepRecord>> StepFields();
std::span<const Field<Summary>> SummaryFields();
std::span<const Field<DeviceRecord>> DeviceFields();
std::span<const Field<DeviceRecord>> ScenarioDeviceFields();  // Report.devices entries
std::span<const Field<BufferRecord>> BufferFields();
std::span<const Field<GraphNodeRecord>> GraphNodeFields();
std::span<const Field<GraphRecord>> GraphFields();
std::span<const Field<Report>> ReportFields();

// Writes the fields of `record` that are due into a new object.
template <typename R>
Json Write(std::span<const Field<R>> table, const R& record) {
  Json j = Json::object();
  for (const Field<R>& f : table)
    if (f.written == nullptr || f.written(record)) f.write(record, f.key, j);
  return j;
}

// Reads `object` (at JSON pointer `pointer`) into `out`, one message per problem in `r`.
template <typename R>
void Read(std::span<const Field<R>> table, FieldReader& r, const Json& object,
          const std::string& pointer, R& out) {
  for (const Field<R>& f : table) {
    const bool required = f.written == nullptr ||
                          (f.with != nullptr && object.find(f.with) != object.end()) ||
                          (f.without != nullptr && object.find(f.without) == object.end());
    if (required || object.find(f.key) != object.end()) f.read(r, object, pointer, f, out);
  }
}

}  // namespace vmm::report::fields
