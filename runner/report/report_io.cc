// The JSON writer (ReportToJson) and the enum spellings. The reader is in report_parse.cc.
#include "runner/report/report_io.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <string_view>

#include "runner/base/limits.h"
#include "runner/report/atomic_file.h"
#include "runner/report/json_limits.h"
#include "runner/report/record_fields.h"
#include "runner/report/record_json.h"
#include "runner/report/scalar_json.h"

namespace vmm::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kToolName = "vmm-run";

}  // namespace

namespace json {

Json StepToJson(const StepRecord& s) { return fields::Write(fields::StepFields(), s); }

}  // namespace json

namespace {

Json GraphNodeToJson(const GraphNodeRecord& n) {
  Json j;
  j["index"] = n.index;
  j["name"] = n.name;
  j["type"] = n.type;
  j["detail"] = n.detail;
  Json buffers = Json::array();
  for (const auto& [name, access] : n.buffers)
    buffers.push_back({{"name", name}, {"access", access}});
  j["buffers"] = std::move(buffers);
  j["dependencies"] = n.dependencies;
  if (!n.children.empty()) {
    Json children = Json::array();
    for (const GraphNodeRecord& c : n.children) children.push_back(GraphNodeToJson(c));
    j["children"] = std::move(children);
  }
  return j;
}

Json GraphToJson(const GraphRecord& g) {
  Json j;
  j["graph"] = g.graph;
  j["capture_step"] = g.capture_step;
  j["capture_name"] = g.capture_name;
  j["structure_hash"] = g.structure_hash;
  if (!g.dot_file.empty()) j["dot_file"] = g.dot_file;
  Json nodes = Json::array(), edges = Json::array();
  for (const GraphNodeRecord& n : g.nodes) {
    nodes.push_back(GraphNodeToJson(n));
    for (int d : n.dependencies) edges.push_back({d, n.index});
  }
  j["nodes"] = std::move(nodes);
  j["edges"] = std::move(edges);
  return j;
}

Json DeviceToJson(const DeviceRecord& d) {
  Json j;
  j["name"] = d.name;
  j["ordinal"] = d.ordinal;
  j["compute_capability"] = d.compute_capability;
  j["driver_version"] = d.driver_version;
  j["runtime_version"] = d.runtime_version;
  j["vmm_supported"] = d.vmm_supported;
  j["granularity_min_bytes"] = std::to_string(d.granularity_min);
  j["granularity_recommended_bytes"] = std::to_string(d.granularity_recommended);
  j["total_memory_bytes"] = std::to_string(d.total_memory);
  return j;
}

}  // namespace

namespace json {

Json SummaryToJson(const Summary& s) { return fields::Write(fields::SummaryFields(), s); }

}  // namespace json

std::string ScalarText(const Scalar& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
    return ec == std::errc() ? std::string(buf, end) : "nan";
  }
  return std::get<std::string>(v);
}

const Scalar* FindDetail(const Details& details, std::string_view key) {
  for (const auto& [k, v] : details)
    if (k == key) return &v;
  return nullptr;
}

bool IsDataHashKey(const std::string& key) {
  constexpr std::string_view kSuffix = "_hash";
  return key.size() >= kSuffix.size() &&
         key.compare(key.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

const char* StepStatusName(StepStatus s) {
  switch (s) {
    case StepStatus::kOk:
      return "ok";
    case StepStatus::kFailed:
      return "failed";
    case StepStatus::kSkipped:
      return "skipped";
    case StepStatus::kUnchecked:
      return "unchecked";
  }
  return "unknown";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
  }
  return "unknown";
}

bool ParseStepStatus(const std::string& name, StepStatus* out) {
  for (StepStatus s :
       {StepStatus::kOk, StepStatus::kFailed, StepStatus::kSkipped, StepStatus::kUnchecked}) {
    if (name == StepStatusName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

bool ParseVerdict(const std::string& name, Verdict* out) {
  for (Verdict v : {Verdict::kPass, Verdict::kFail}) {
    if (name == VerdictName(v)) {
      *out = v;
      return true;
    }
  }
  return false;
}

namespace {

// The report's members before "steps", in the schema's order.
Json HeadToJson(const Report& r) {
  Json j;
  j["schema_version"] = r.schema_version;
  j["tool"] = {{"name", kToolName}, {"version", r.tool_version}, {"git_sha", r.git_sha}};
  j["argv"] = r.argv;
  j["scenario"] = {
      {"path", r.scenario_path}, {"sha256", r.scenario_sha256}, {"name", r.scenario_name}};
  j["backend"] = {{"name", r.backend}, {"reason", r.backend_reason}};
  j["device"] = DeviceToJson(r.device);
  if (!r.devices.empty()) {
    Json devices = Json::array();
    for (const DeviceRecord& d : r.devices) {
      Json entry = DeviceToJson(d);
      entry["scenario_device"] = d.scenario_device;
      entry["pci_bus_id"] = d.pci_bus_id;
      devices.push_back(std::move(entry));
    }
    j["devices"] = std::move(devices);
  }
  j["granularity_bytes"] = std::to_string(r.granularity);
  if (!r.vars.empty()) {
    Json vars = Json::object();
    for (const auto& [name, value] : r.vars) vars[name] = value;
    j["vars"] = std::move(vars);
  }
  if (!r.sweep_point.empty()) {
    Json point = Json::object();
    for (const auto& [name, value] : r.sweep_point) point[name] = value;
    j["sweep_point"] = std::move(point);
  }
  j["started_at"] = r.started_at;
  if (!r.buffers.empty()) {
    Json buffers = Json::array();
    for (const BufferRecord& b : r.buffers) {
      Json bj;
      bj["name"] = b.name;
      if (!b.view_of.empty()) {
        bj["view_of"] = b.view_of;
        bj["offset_bytes"] = std::to_string(b.offset);
      } else {
        bj["reservation_bytes"] = std::to_string(b.reservation_bytes);
      }
      bj["bytes"] = std::to_string(b.bytes);
      buffers.push_back(std::move(bj));
    }
    j["buffers"] = std::move(buffers);
  }
  return j;
}

// `value` as nlohmann's dump(2) writes it at nesting depth `depth` (its lines after the first
// indented by 2 * depth more spaces), with bytes that are not UTF-8 replaced by U+FFFD and control
// characters too (json_limits.h), so that the reader accepts what was written. A JSON text has no
// raw newline inside a string, so every newline is a line break of the layout.
std::string Dump(const Json& value, int depth) {
  std::string text = value.dump(2, ' ', false, Json::error_handler_t::replace);
  const std::string indent(2 * static_cast<size_t>(depth), ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  return ReplaceControlCharacters(std::move(out));
}

}  // namespace

Status StreamReportJson(const Report& r, const PieceWriter& write) {
  // The document is an object at depth 0: "{", its members at depth 1 ("  \"key\": value"),
  // "}". The steps (and graphs) are written one at a time, as elements at depth 2.
  const Json head = HeadToJson(r);
  std::string piece = "{";
  for (const auto& [key, value] : head.items()) {
    piece += (piece.size() == 1 ? "\n  " : ",\n  ") + Json(key).dump() + ": " + Dump(value, 1);
  }
  auto array = [&](const char* key, size_t n, const auto& element) -> Status {
    piece += std::string(",\n  \"") + key + "\": ";
    if (n == 0) {
      piece += "[]";
      return Status::Ok();
    }
    piece += "[";
    for (size_t i = 0; i < n; ++i) {
      piece += (i == 0 ? "\n    " : ",\n    ") + Dump(element(i), 2);
      VMM_RETURN_IF_ERROR(write(piece));
      piece.clear();
    }
    piece += "\n  ]";
    return Status::Ok();
  };
  VMM_RETURN_IF_ERROR(
      array("steps", r.steps.size(), [&](size_t i) { return json::StepToJson(r.steps[i]); }));
  if (!r.graphs.empty()) {
    VMM_RETURN_IF_ERROR(
        array("graphs", r.graphs.size(), [&](size_t i) { return GraphToJson(r.graphs[i]); }));
  }
  piece += ",\n  \"summary\": " + Dump(json::SummaryToJson(r.summary), 1) + "\n}\n";
  return write(piece);
}

std::string ReportToJson(const Report& r) {
  std::string text;
  (void)StreamReportJson(r, [&](std::string_view piece) {
    text.append(piece);
    return Status::Ok();
  });
  return text;
}

Status WriteReport(const Report& report, const std::string& path, size_t max_bytes) {
  if (max_bytes == 0) max_bytes = LimitValue(Limit::kReportBytes);
  // Past the limit nothing more is written, but the bytes are still counted for the message.
  uint64_t bytes = 0;
  return WriteFileAtomically(path, [&](const PieceWriter& write) {
    VMM_RETURN_IF_ERROR(StreamReportJson(report, [&](std::string_view piece) {
      bytes += piece.size();
      return bytes > max_bytes ? Status::Ok() : write(piece);
    }));
    if (bytes <= max_bytes) return Status::Ok();
    return Status(Code::kRuntime,
                  "the report of '" + report.scenario_name + "' would be " + std::to_string(bytes) +
                      " bytes, past the " + std::to_string(max_bytes >> 20) +
                      " MiB that vmm-run reads back (diff, timeline); run fewer steps per scenario "
                      "(split it, or shorten its loops)" +
                      RaiseHint(Limit::kReportBytes));
  });
}

StatusOr<Report> ReadReport(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParseReportJson(*text, path);
}

}  // namespace vmm::report
