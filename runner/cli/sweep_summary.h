// The summary of one sweep (`sweep:` in a scenario): one row per point with its axis values, the
// result, and the median wall time of each op over that point's steps that ran (`<op>_us`; a
// repeated step counts with its median; a skipped step has no time and is left out, so a point
// that stopped early is not made to look fast; an op none of whose steps ran has an empty cell).
// Printed after the sweep ran and written as CSV and Markdown beside its reports.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/report/report.h"

namespace vmm {

// Rows of the table (the first is the header), one per report, in the order given.
std::vector<std::vector<std::string>> SweepTable(const std::vector<const report::Report*>& points);

// The table as aligned text (for the console; a line break in a cell is shown as a space), as CSV
// (RFC 4180 quoting) and as a Markdown table (GitHub's pipe tables; cells as base/markdown_cell.h).
std::string FormatSweepTable(const std::vector<std::vector<std::string>>& rows);
std::string SweepTableCsv(const std::vector<std::vector<std::string>>& rows);
std::string SweepTableMarkdown(const std::vector<std::vector<std::string>>& rows);

// Prints the table to `out` and writes it as CSV to `csv_path` and as Markdown beside it (the same
// path with .md for .csv), each atomically.
Status WriteSweepSummary(const std::vector<const report::Report*>& points,
                         const std::string& csv_path, std::ostream& out);

}  // namespace vmm
