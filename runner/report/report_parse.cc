// ParseReportJson: the strict reader of report JSON (the inverse of ReportToJson in report_io.cc).
// nlohmann exceptions stop here: parsing uses the exception-free API and every access checks the
// type first.
#include <charconv>
#include <nlohmann/json.hpp>

#include "runner/base/format.h"
#include "runner/report/field_reader.h"
#include "runner/report/json_limits.h"
#include "runner/report/record_fields.h"
#include "runner/report/record_json.h"
#include "runner/report/report_io.h"

namespace vmm::report {
namespace {

StepRecord ReadStep(FieldReader& r, const Json& s, const std::string& p) {
  StepRecord step;
  fields::Read(fields::StepFields(), r, s, p, step);
  return step;
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

  fields::Read(fields::ReportFields(), r, root, "", report);

  if (!r.errors().empty()) {
    std::string message;
    for (const std::string& e : r.errors()) message += (message.empty() ? "" : "\n") + e;
    return InvalidInput(message);
  }
  return report;
}

}  // namespace vmm::report
