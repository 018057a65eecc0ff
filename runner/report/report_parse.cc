// ParseReportJson: the strict reader of report JSON (the inverse of ReportToJson in report_io.cc).
// nlohmann exceptions stop here: parsing uses the exception-free API and every access checks the
// type first.
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "runner/base/format.h"
#include "runner/report/field_reader.h"
#include "runner/report/json_limits.h"
#include "runner/report/record_fields.h"
#include "runner/report/record_json.h"
#include "runner/report/report_io.h"
#include "runner/report/scalar_json.h"

namespace vmm::report {
namespace {

StepRecord ReadStep(FieldReader& r, const Json& s, const std::string& p) {
  StepRecord step;
  fields::Read(fields::StepFields(), r, s, p, step);
  return step;
}

GraphNodeRecord ReadGraphNode(FieldReader& r, const Json& n, const std::string& p) {
  GraphNodeRecord node;
  r.Integer(n, p, "index", &node.index, 0);
  r.String(n, p, "name", &node.name);
  r.String(n, p, "type", &node.type);
  r.String(n, p, "detail", &node.detail);
  if (const Json* buffers = r.Array(n, p, "buffers", true)) {
    for (size_t i = 0; i < buffers->size(); ++i) {
      const std::string bp = p + "/buffers/" + std::to_string(i);
      if (!(*buffers)[i].is_object()) {
        r.Error(bp, "expected an object, got " + TypeText((*buffers)[i]));
        continue;
      }
      std::string name, access;
      r.String((*buffers)[i], bp, "name", &name);
      r.String((*buffers)[i], bp, "access", &access);
      node.buffers.emplace_back(std::move(name), std::move(access));
    }
  }
  if (const Json* deps = r.Array(n, p, "dependencies", true)) {
    for (size_t i = 0; i < deps->size(); ++i) {
      if ((*deps)[i].is_number_integer()) {
        node.dependencies.push_back((*deps)[i].get<int>());
      } else {
        r.Error(p + "/dependencies/" + std::to_string(i),
                "expected an integer, got " + TypeText((*deps)[i]));
      }
    }
  }
  if (const Json* children = r.Array(n, p, "children", false)) {
    for (size_t i = 0; i < children->size(); ++i) {
      const std::string cp = p + "/children/" + std::to_string(i);
      if (!(*children)[i].is_object()) {
        r.Error(cp, "expected an object, got " + TypeText((*children)[i]));
        continue;
      }
      node.children.push_back(ReadGraphNode(r, (*children)[i], cp));
    }
  }
  return node;
}

GraphRecord ReadGraph(FieldReader& r, const Json& g, const std::string& p) {
  GraphRecord graph;
  r.String(g, p, "graph", &graph.graph);
  r.Integer(g, p, "capture_step", &graph.capture_step, 0);
  r.String(g, p, "capture_name", &graph.capture_name);
  r.String(g, p, "structure_hash", &graph.structure_hash);
  if (r.Member(g, p, "dot_file", false)) r.String(g, p, "dot_file", &graph.dot_file);
  if (const Json* nodes = r.Array(g, p, "nodes", true)) {
    for (size_t i = 0; i < nodes->size(); ++i) {
      const std::string np = p + "/nodes/" + std::to_string(i);
      if (!(*nodes)[i].is_object()) {
        r.Error(np, "expected an object, got " + TypeText((*nodes)[i]));
        continue;
      }
      graph.nodes.push_back(ReadGraphNode(r, (*nodes)[i], np));
    }
  }
  return graph;  // "edges" repeats the nodes' dependencies: nothing more to read
}

void ReadDevice(FieldReader& r, const Json& d, DeviceRecord* out,
                const std::string& p = "/device") {
  r.String(d, p, "name", &out->name);
  r.Integer(d, p, "ordinal", &out->ordinal);
  r.String(d, p, "compute_capability", &out->compute_capability);
  r.String(d, p, "driver_version", &out->driver_version);
  r.String(d, p, "runtime_version", &out->runtime_version);
  r.Bool(d, p, "vmm_supported", &out->vmm_supported);
  r.DecimalString(d, p, "granularity_min_bytes", &out->granularity_min);
  r.DecimalString(d, p, "granularity_recommended_bytes", &out->granularity_recommended);
  r.DecimalString(d, p, "total_memory_bytes", &out->total_memory);
}

void ReadSummary(FieldReader& r, const Json& s, Summary* out) {
  fields::Read(fields::SummaryFields(), r, s, "/summary", *out);
}

// "1.0" -> major 1. False unless the string is "<digits>.<digits>".
bool ParseMajor(const std::string& version, int* major) {
  const size_t dot = version.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == version.size()) return false;
  for (size_t i = 0; i < version.size(); ++i) {
    if (i != dot && (version[i] < '0' || version[i] > '9')) return false;
  }
  auto [end, ec] = std::from_chars(version.data(), version.data() + dot, *major);
  return ec == std::errc() && end == version.data() + dot;
}

// "r.json:3:7: invalid JSON: <what>" from the byte offset nlohmann reports.
std::string SyntaxError(const std::string& text, const std::string& name, size_t byte,
                        const std::string& what) {
  int line = 1, column = 1;
  for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, column 2:
  // syntax error while parsing value - ..."; keep the part after the position.
  std::string reason = what;
  if (size_t col = what.find("column "); col != std::string::npos) {
    if (size_t colon = what.find(": ", col); colon != std::string::npos) {
      reason = what.substr(colon + 2);
    }
  }
  // The reason quotes what was last read, which can be a whole long string of the file.
  return name + ":" + std::to_string(line) + ":" + std::to_string(column) +
         ": invalid JSON: " + Excerpt(reason, 200);
}

// "[json.exception.out_of_range.406] number overflow ..." -> "number overflow ...".
std::string WithoutExceptionId(const std::string& what) {
  if (what.rfind("[json.exception.", 0) == 0) {
    if (size_t end = what.find("] "); end != std::string::npos) return what.substr(end + 2);
  }
  return what;
}

}  // namespace

namespace json {

StepRecord StepFromJson(const Json& j, const std::string& name, const std::string& pointer,
                        std::vector<std::string>* errors) {
  FieldReader r(name);
  StepRecord step;
  if (j.is_object()) {
    step = ReadStep(r, j, pointer);
  } else {
    r.Error(pointer, "expected an object, got " + TypeText(j));
  }
  errors->insert(errors->end(), r.errors().begin(), r.errors().end());
  return step;
}

Summary SummaryFromJson(const Json& j, const std::string& name, std::vector<std::string>* errors) {
  FieldReader r(name);
  Summary summary;
  if (j.is_object()) {
    ReadSummary(r, j, &summary);
  } else {
    r.Error("/summary", "expected an object, got " + TypeText(j));
  }
  errors->insert(errors->end(), r.errors().begin(), r.errors().end());
  return summary;
}

}  // namespace json

StatusOr<Report> ParseReportJson(const std::string& text, const std::string& name) {
  // nlohmann's wording for empty input changed in 3.11.3; say it plainly on every version.
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return InvalidInput(name + ": the file is empty; expected a vmm-run JSON report");
  // Bounded nesting and numbers that fit a double, before nlohmann sees the text.
  VMM_RETURN_IF_ERROR(CheckJsonLimits(text, name));
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return InvalidInput(SyntaxError(text, name, e.byte, e.what()));
  } catch (const Json::exception& e) {
    // Anything else nlohmann refuses (the pre-scan should leave nothing) is still bad input.
    return InvalidInput(name + ": invalid JSON: " + WithoutExceptionId(e.what()));
  }
  FieldReader r(name);
  if (!root.is_object()) return InvalidInput(name + ": expected an object, got " + TypeText(root));

  Report report;
  r.String(root, "", "schema_version", &report.schema_version);
  if (!r.errors().empty()) return InvalidInput(r.errors().front());
  int major = 0;
  if (!ParseMajor(report.schema_version, &major)) {
    return InvalidInput(name + ": /schema_version: expected '<major>.<minor>', got '" +
                        report.schema_version + "'");
  }
  if (major != 1) {
    return InvalidInput(name + ": schema_version " + report.schema_version +
                        " is not supported (this vmm-run reads 1.x)");
  }

  if (const Json* tool = r.Object(root, "", "tool", true)) {
    std::string tool_name;
    r.String(*tool, "/tool", "name", &tool_name);
    r.String(*tool, "/tool", "version", &report.tool_version);
    r.String(*tool, "/tool", "git_sha", &report.git_sha);
  }
  if (const Json* argv = r.Array(root, "", "argv", true)) {
    for (size_t i = 0; i < argv->size(); ++i) {
      if ((*argv)[i].is_string()) {
        report.argv.push_back((*argv)[i].get<std::string>());
      } else {
        r.Error("/argv/" + std::to_string(i), "expected a string, got " + TypeText((*argv)[i]));
      }
    }
  }
  if (const Json* scenario = r.Object(root, "", "scenario", true)) {
    r.String(*scenario, "/scenario", "path", &report.scenario_path);
    r.String(*scenario, "/scenario", "sha256", &report.scenario_sha256);
    r.String(*scenario, "/scenario", "name", &report.scenario_name);
  }
  if (const Json* backend = r.Object(root, "", "backend", true)) {
    r.String(*backend, "/backend", "name", &report.backend);
    r.String(*backend, "/backend", "reason", &report.backend_reason);
  }
  if (const Json* device = r.Object(root, "", "device", true))
    ReadDevice(r, *device, &report.device);
  if (const Json* devices = r.Array(root, "", "devices", false)) {
    for (size_t i = 0; i < devices->size(); ++i) {
      const std::string p = "/devices/" + std::to_string(i);
      DeviceRecord& d = report.devices.emplace_back();
      if (!(*devices)[i].is_object()) {
        r.Error(p, "expected an object");
        continue;
      }
      ReadDevice(r, (*devices)[i], &d, p);
      r.Integer((*devices)[i], p, "scenario_device", &d.scenario_device);
      r.String((*devices)[i], p, "pci_bus_id", &d.pci_bus_id);
    }
  }
  r.DecimalString(root, "", "granularity_bytes", &report.granularity);
  for (const auto& [key, out] :
       {std::pair{"vars", &report.vars}, std::pair{"sweep_point", &report.sweep_point}}) {
    const Json* map = r.Object(root, "", key, false);
    if (map == nullptr) continue;
    for (auto it = map->begin(); it != map->end(); ++it) {
      if (it->is_string()) {
        out->emplace_back(it.key(), it->get<std::string>());
      } else {
        r.Error("/" + std::string(key) + "/" + it.key(), "expected a string, got " + TypeText(*it));
      }
    }
  }
  r.String(root, "", "started_at", &report.started_at);
  if (const Json* buffers = r.Array(root, "", "buffers", false)) {
    for (size_t i = 0; i < buffers->size(); ++i) {
      const std::string p = "/buffers/" + std::to_string(i);
      const Json& b = (*buffers)[i];
      if (!b.is_object()) {
        r.Error(p, "expected an object, got " + TypeText(b));
        continue;
      }
      BufferRecord buffer;
      r.String(b, p, "name", &buffer.name);
      r.DecimalString(b, p, "bytes", &buffer.bytes);
      if (r.Member(b, p, "view_of", false)) {
        r.String(b, p, "view_of", &buffer.view_of);
        r.DecimalString(b, p, "offset_bytes", &buffer.offset);
      } else {
        r.DecimalString(b, p, "reservation_bytes", &buffer.reservation_bytes);
      }
      report.buffers.push_back(std::move(buffer));
    }
  }
  if (const Json* steps = r.Array(root, "", "steps", true)) {
    for (size_t i = 0; i < steps->size(); ++i) {
      const std::string p = "/steps/" + std::to_string(i);
      if (!(*steps)[i].is_object()) {
        r.Error(p, "expected an object, got " + TypeText((*steps)[i]));
        continue;
      }
      report.steps.push_back(ReadStep(r, (*steps)[i], p));
    }
  }
  if (const Json* graphs = r.Array(root, "", "graphs", false)) {
    for (size_t i = 0; i < graphs->size(); ++i) {
      const std::string p = "/graphs/" + std::to_string(i);
      if (!(*graphs)[i].is_object()) {
        r.Error(p, "expected an object, got " + TypeText((*graphs)[i]));
        continue;
      }
      report.graphs.push_back(ReadGraph(r, (*graphs)[i], p));
    }
  }
  if (const Json* summary = r.Object(root, "", "summary", true)) {
    ReadSummary(r, *summary, &report.summary);
  }

  if (!r.errors().empty()) {
    std::string message;
    for (const std::string& e : r.errors()) message += (message.empty() ? "" : "\n") + e;
    return InvalidInput(message);
  }
  return report;
}

}  // namespace vmm::report
