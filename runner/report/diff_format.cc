#include "runner/report/diff_format.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "runner/base/markdown_cell.h"

namespace vmm::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kDiffSchemaVersion = "1.0";
constexpr const char* kAbsent = "-";

// Terminal columns taken by UTF-8 `s` (one per code point; no wide characters in our output).
size_t Width(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; });
}

const char* Color(RowKind kind) {
  switch (kind) {
    case RowKind::kRegression:
    case RowKind::kMissing:
      return "\033[31m";  // red
    case RowKind::kAmbiguous:
      return "\033[33m";  // yellow
    case RowKind::kImprovement:
      return "\033[32m";  // green
    case RowKind::kAdded:
      return "\033[36m";  // cyan
    case RowKind::kInfo:
    case RowKind::kSkipped:
      return "\033[2m";  // dim
  }
  return "";
}

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string FailOnText(const FailOn& fail_on) {
  std::string out;
  for (RowKind k : kAllRowKinds) {
    if (fail_on.count(k)) out += (out.empty() ? "" : ", ") + std::string(RowKindName(k));
  }
  return out.empty() ? "nothing" : out;
}

// "2 scenarios, 91 steps compared: 1 regression, 0 improvements, 0 missing, 0 added, 0 ambiguous"
std::string CountsText(const DiffResult& r) {
  return Plural(r.scenarios, "scenario", "scenarios") + ", " + Plural(r.steps, "step", "steps") +
         " compared: " + Plural(r.Count(RowKind::kRegression), "regression", "regressions") + ", " +
         Plural(r.Count(RowKind::kImprovement), "improvement", "improvements") + ", " +
         std::to_string(r.Count(RowKind::kMissing)) + " missing, " +
         std::to_string(r.Count(RowKind::kAdded)) + " added, " +
         std::to_string(r.Count(RowKind::kAmbiguous)) + " ambiguous, " +
         std::to_string(r.Count(RowKind::kInfo)) + " info" +
         (r.Count(RowKind::kSkipped) > 0
              ? ", " + std::to_string(r.Count(RowKind::kSkipped)) + " skipped"
              : std::string());
}

std::array<std::string, 6> Cells(const DiffRow& row) {
  return {RowKindName(row.kind),
          row.scenario,
          row.step.empty() ? kAbsent : row.step,
          row.field,
          row.base.value_or(kAbsent),
          row.now.value_or(kAbsent)};
}

Json ThresholdJson(const TimingThreshold& t) {
  Json j;
  j["enabled"] = t.enabled;
  j["single_runs"] = t.single_runs;
  j["relative"] = t.relative;
  j["floor_us"] = t.floor_us;
  j["spread_factor"] = t.spread_factor;
  return j;
}

Json OptionalText(const std::optional<std::string>& s) { return s ? Json(*s) : Json(nullptr); }

}  // namespace

std::string FormatDiffTable(const DiffResult& result, const DiffFormatOptions& options) {
  const bool failed = DiffFails(result, options.fail_on);
  const std::string summary = CountsText(result) + "; result: " + (failed ? "fail" : "pass") +
                              " (fails on " + FailOnText(options.fail_on) + ")\n";
  if (result.rows.empty()) return "no differences\n" + summary;

  const std::array<std::string, 6> header = {"KIND", "SCENARIO", "STEP", "FIELD", "BASE", "NEW"};
  std::array<size_t, 6> width{};
  for (size_t c = 0; c < header.size(); ++c) width[c] = Width(header[c]);
  for (const DiffRow& row : result.rows) {
    const auto cells = Cells(row);
    for (size_t c = 0; c < cells.size(); ++c) width[c] = std::max(width[c], Width(cells[c]));
  }
  auto line = [&](const std::array<std::string, 6>& cells, const char* color) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string cell = cells[c];
      if (c + 1 < cells.size()) cell += std::string(width[c] - Width(cell) + 2, ' ');
      if (c == 0 && color != nullptr) {
        // Colour the kind only; the padding stays outside the escape codes.
        out += color + cells[c] + "\033[0m" + cell.substr(cells[c].size());
      } else {
        out += cell;
      }
    }
    return out + "\n";
  };
  std::string out = line(header, nullptr);
  for (const DiffRow& row : result.rows) {
    out += line(Cells(row), options.color ? Color(row.kind) : nullptr);
    if (options.explain) out += "    why: " + row.reason + "\n";
  }
  return out + summary;
}

std::string FormatDiffMarkdown(const DiffResult& result, const DiffFormatOptions& options) {
  const bool failed = DiffFails(result, options.fail_on);
  std::string out =
      std::string("### vmm-run diff: ") + (failed ? ":x: fail" : ":white_check_mark: pass") +
      "\n\n`" + MarkdownCell(options.base_path) + "` → `" + MarkdownCell(options.new_path) +
      "`: " + CountsText(result) + " (fails on " + FailOnText(options.fail_on) + ").\n";
  if (result.rows.empty()) return out + "\nNo differences.\n";
  out += options.explain ? "\n| kind | scenario | step | field | base | new | why |\n"
                           "|---|---|---|---|---|---|---|\n"
                         : "\n| kind | scenario | step | field | base | new |\n"
                           "|---|---|---|---|---|---|\n";
  for (const DiffRow& row : result.rows) {
    const auto cells = Cells(row);
    out += "|";
    for (size_t c = 0; c < cells.size(); ++c) {
      // Failing kinds in bold. (Appends one piece at a time: GCC 12 warns falsely on
      // `" " + s + " |"` here.)
      const bool bold = c == 0 && options.fail_on.count(row.kind) > 0;
      out.append(bold ? " **" : " ").append(MarkdownCell(cells[c])).append(bold ? "** |" : " |");
    }
    if (options.explain) out.append(" ").append(MarkdownCell(row.reason)).append(" |");
    out += "\n";
  }
  return out;
}

std::string DiffToJson(const DiffResult& result, const DiffFormatOptions& options) {
  Json j;
  j["schema_version"] = kDiffSchemaVersion;
  j["base"] = options.base_path;
  j["new"] = options.new_path;
  j["result"] = DiffFails(result, options.fail_on) ? "fail" : "pass";
  Json fail_on = Json::array();
  for (RowKind k : kAllRowKinds) {
    if (options.fail_on.count(k)) fail_on.push_back(RowKindName(k));
  }
  j["fail_on"] = std::move(fail_on);
  j["compared"] = {{"scenarios", result.scenarios}, {"steps", result.steps}};
  Json counts;
  for (RowKind k : kAllRowKinds) counts[RowKindName(k)] = result.Count(k);
  j["counts"] = std::move(counts);
  Json config;
  config["timing"] = ThresholdJson(options.config.timing);
  Json metrics = Json::object();
  for (const auto& [name, t] : options.config.metrics) metrics[name] = ThresholdJson(t);
  config["metrics"] = std::move(metrics);
  config["ignore_device"] = options.config.ignore_device;
  j["config"] = std::move(config);
  Json rows = Json::array();
  for (const DiffRow& row : result.rows) {
    Json r;
    r["kind"] = RowKindName(row.kind);
    r["fails"] = options.fail_on.count(row.kind) > 0;
    r["scenario"] = row.scenario;
    r["step"] = row.step;
    r["field"] = row.field;
    r["base"] = OptionalText(row.base);
    r["new"] = OptionalText(row.now);
    r["reason"] = row.reason;
    rows.push_back(std::move(r));
  }
  j["rows"] = std::move(rows);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace vmm::report
