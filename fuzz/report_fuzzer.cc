// libFuzzer target: report JSON -> ParseReportJson -> DiffReports (against itself and against a
// fixed report) -> every diff output format. Contracts under test: the reader never crashes on any
// byte string (bounded nesting, numbers out of range, wrong types); a report it accepts writes back
// as JSON that it accepts again (ReportToJson is the inverse of the reader); diffing a report with
// itself finds no regression (other than being interrupted).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runner/report/diff.h"
#include "runner/report/diff_format.h"
#include "runner/report/report_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vmm::report;
  const std::string text(reinterpret_cast<const char*>(data), size);
  vmm::StatusOr<Report> report = ParseReportJson(text, "fuzz.json");
  if (!report.ok()) {
    if (report.status().message().empty()) std::abort();  // refused without saying why
    return 0;
  }
  vmm::StatusOr<Report> again = ParseReportJson(ReportToJson(*report), "again.json");
  if (!again.ok()) std::abort();  // the writer produced what the reader refuses

  DiffConfig config;
  DiffResult self;
  DiffReports(*report, *report, config, &self);
  for (const DiffRow& row : self.rows) {
    // An interrupted run is a regression even against itself; nothing else may differ.
    if (row.kind == RowKind::kRegression && row.field != "interrupted") std::abort();
  }

  Report empty;
  empty.scenario_name = report->scenario_name;
  DiffResult result;
  DiffReports(empty, *report, config, &result);
  DiffReports(*report, empty, config, &result);
  DiffFormatOptions format;
  format.explain = true;
  (void)FormatDiffTable(result, format);
  (void)FormatDiffMarkdown(result, format);
  (void)DiffToJson(result, format);
  return 0;
}
