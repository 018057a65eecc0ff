// Renderings of a DiffResult: an aligned terminal table, a Markdown job summary, a JSON document
// (schemas/diff.schema.json). All are pure functions of their inputs; the caller decides colour
// (only for a terminal, never with NO_COLOR set).
#pragma once

#include <string>

#include "runner/report/diff.h"

namespace vmm::report {

struct DiffFormatOptions {
  std::string base_path, new_path;  // as given on the command line
  FailOn fail_on = DefaultFailOn();
  DiffConfig config;     // echoed in the JSON document
  bool explain = false;  // table/markdown: add each row's reason (JSON always has it)
  bool color = false;    // table only: ANSI colours by row kind
};

// Columns KIND SCENARIO STEP FIELD BASE NEW, aligned; with `explain` each row is followed by its
// indented reason. Ends with a one-line summary ("... result: fail (fails on regression,
// missing)").
std::string FormatDiffTable(const DiffResult& result, const DiffFormatOptions& options);

// A heading with the result, a counts line, and a GitHub/GitLab table of the rows ("|" escaped).
std::string FormatDiffMarkdown(const DiffResult& result, const DiffFormatOptions& options);

// The diff as JSON (2-space indent, "schema_version" first), newline-terminated.
std::string DiffToJson(const DiffResult& result, const DiffFormatOptions& options);

}  // namespace vmm::report
