// Reports as JSON documents: the layout is documented field by field in schemas/report.schema.json.
//
// Encoding rules (the reader is the exact inverse of the writer, so Report -> JSON -> Report ->
// JSON is byte-identical):
//   - "schema_version" is the first key; objects keep the order of the schema; 2-space indent.
//   - 64-bit quantities of the report (granularity, device memory) are decimal strings
//     ("2097152"); addresses and hashes are "0x..." strings produced by the executor.
//   - Details/addresses values keep their type: bool -> true/false, double -> a JSON number with a
//     fraction or exponent (2.0, never 2), int64 -> a JSON integer when |v| < 2^53 (exact in every
//     JSON reader), else a decimal string; a string that is a canonical decimal integer outside
//     that range reads back as int64. Non-finite doubles are written as null and read back as NaN.
//   - Optional fields (gpu_us, wall_stats, gpu_stats, check, error, body) are omitted when absent
//     or empty.
// Readers are strict about the type of every known field and tolerant of unknown fields (a newer
// 1.x writer may add some); they refuse a report of another major schema version.
#pragma once

#include <string>

#include "runner/base/status.h"
#include "runner/report/atomic_file.h"
#include "runner/report/report.h"

namespace vmm::report {

// The report as JSON text, terminated by a newline. Never fails: strings that are not valid UTF-8
// have their bad bytes replaced by U+FFFD.
std::string ReportToJson(const Report& report);

// The same text, given to `write` in pieces (the steps one or a few at a time), so that a report
// of many steps is never held whole in memory; returns the first failed write's Status.
Status StreamReportJson(const Report& report, const PieceWriter& write);

// Writes ReportToJson(report) to `path` atomically (see WriteFileAtomically): on failure an
// existing file at `path` is left untouched and a kRuntime Status names the file. A report larger
// than `max_bytes` (what ReadReport accepts: the report_bytes limit, base/limits.h, when 0) is
// refused with kRuntime, so every report written reads back.
Status WriteReport(const Report& report, const std::string& path, size_t max_bytes = 0);

// Parses a report. `name` (usually the file path) prefixes every message. Fails with kInvalidInput:
//   "r.json:3:7: invalid JSON: syntax error while parsing object key - ..."
//   "r.json: schema_version 2.0 is not supported (this vmm-run reads 1.x)"
//   "r.json: /steps/3/status: expected one of ok, failed, skipped, unchecked, got 'done'"
// Type errors are all reported in one pass, one per line.
StatusOr<Report> ParseReportJson(const std::string& text, const std::string& name);

// ReadFileToString + ParseReportJson(text, path).
StatusOr<Report> ReadReport(const std::string& path);

// Inverses of StepStatusName / VerdictName (report.h); false when `name` is not one of them.
bool ParseStepStatus(const std::string& name, StepStatus* out);
bool ParseVerdict(const std::string& name, Verdict* out);

}  // namespace vmm::report
