// The summary of one sweep (`sweep:` in a scenario): one row per point with its axis values, the
// result, and the wall time of each op over that point's steps that ran. A skipped step has no
// time and is left out, so a point that stopped early is not made to look fast; an op none of
// whose steps ran has empty cells. The console shows the median (`<op>_us`; a repeated step counts
// with its median); the CSV and Markdown files give per op `<op>_n` (calls timed: a repeated
// step's own count), `<op>_min_us` and `<op>_max_us` (over every call: a repeated step's own min
// and max), and `<op>_p50_us` and `<op>_p99_us` (nearest rank over the steps' values, a repeated
// step with its median).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/report/report.h"

namespace vmm {

// Rows of the table (the first is the header), one per report, in the order given: the medians
// alone (`full` false: the console's), or every statistic above (`full`: the files').
std::vector<std::vector<std::string>> SweepTable(const std::vector<const report::Report*>& points,
                                                 bool full = false);

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
