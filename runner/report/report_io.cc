// The JSON writer (StreamReportJson, ReportToJson, WriteReport; the fields are the rows of
// record_fields.h) and the enum spellings. The reader is in report_parse.cc.
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

using Json = nlohmann::ordered_json;

namespace json {

Json StepToJson(const StepRecord& s) { return fields::Write(fields::StepFields(), s); }
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

const Scalar* FindDetail(std::span<const Detail> details, std::string_view key) {
  for (const auto& [k, v] : details)
    if (k == key) return &v;
  return nullptr;
}

bool IsHashKey(std::string_view key) { return key.ends_with("_hash"); }

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
  // "}". Lists of records (the steps, the graphs) are written an element at a time, at depth 2.
  std::string piece = "{";
  bool first = true;
  for (const fields::Field<Report>& f : fields::ReportFields()) {
    if (f.written != nullptr && !f.written(r)) continue;
    piece += (first ? "\n  " : ",\n  ") + Json(f.key).dump() + ": ";
    first = false;
    if (f.count == nullptr || f.count(r) == 0) {
      Json member = Json::object();
      f.write(r, f.key, member);
      piece += Dump(member[f.key], 1);
      continue;
    }
    piece += "[";
    for (size_t i = 0, n = f.count(r); i < n; ++i) {
      piece += (i == 0 ? "\n    " : ",\n    ") + Dump(f.element(r, i), 2);
      VMM_RETURN_IF_ERROR(write(piece));
      piece.clear();
    }
    piece += "\n  ]";
  }
  piece += "\n}\n";
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
