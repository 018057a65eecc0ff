#include "runner/cli/sweep_summary.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "runner/base/markdown_cell.h"
#include "runner/exec/timing_stats.h"
#include "runner/report/atomic_file.h"

namespace vmm {
namespace {

std::string Micros(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", us);
  return buf;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One op's cells at one point (see the header): empty when none of its steps ran.
std::vector<std::string> OpCells(const report::Report& r, const std::string& op, bool full) {
  std::vector<double> values;
  uint64_t calls = 0;
  double low = 0, high = 0;
  for (const report::StepRecord& s : r.steps) {
    if (s.op != op || s.status == report::StepStatus::kSkipped) continue;
    const double value = s.wall_stats ? s.wall_stats->median_us : s.wall_us;
    const double min = s.wall_stats ? s.wall_stats->min_us : s.wall_us;
    const double max = s.wall_stats ? s.wall_stats->max_us : s.wall_us;
    low = values.empty() ? min : std::min(low, min);
    high = values.empty() ? max : std::max(high, max);
    calls += s.wall_stats ? s.wall_stats->count : 1;
    values.push_back(value);
  }
  if (!full) return {values.empty() ? "" : Micros(Median(values))};
  if (values.empty()) return std::vector<std::string>(5);
  const report::TimingStats stats = ComputeStats(values);
  return {std::to_string(calls), Micros(low), Micros(stats.median_us), Micros(stats.p99_us),
          Micros(high)};
}

}  // namespace

std::vector<std::vector<std::string>> SweepTable(const std::vector<const report::Report*>& points,
                                                 bool full) {
  std::vector<std::string> axes, ops;
  for (const report::Report* r : points) {
    for (const auto& [axis, value] : r->sweep_point)
      if (std::find(axes.begin(), axes.end(), axis) == axes.end()) axes.push_back(axis);
    for (const report::StepRecord& s : r->steps)
      if (std::find(ops.begin(), ops.end(), s.op) == ops.end()) ops.push_back(s.op);
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = axes;
  header.push_back("result");
  for (const std::string& op : ops) {
    if (!full) {
      header.push_back(op + "_us");
      continue;
    }
    for (const char* column : {"_n", "_min_us", "_p50_us", "_p99_us", "_max_us"})
      header.push_back(op + column);
  }
  rows.push_back(std::move(header));
  for (const report::Report* r : points) {
    std::vector<std::string> row;
    for (const std::string& axis : axes) {
      std::string value;
      for (const auto& [a, v] : r->sweep_point)
        if (a == axis) value = v;
      row.push_back(value);
    }
    row.push_back(r->summary.result);
    for (const std::string& op : ops) {
      std::vector<std::string> cells = OpCells(*r, op, full);
      row.insert(row.end(), cells.begin(), cells.end());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string FormatSweepTable(const std::vector<std::vector<std::string>>& rows_given) {
  std::vector<std::vector<std::string>> rows = rows_given;
  for (auto& row : rows)
    for (std::string& cell : row) std::replace(cell.begin(), cell.end(), '\n', ' ');
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      line += row[i] + std::string(width[i] - row[i].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string SweepTableCsv(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out += ',';
      const std::string& cell = row[i];
      if (cell.find_first_of(",\"\n\r") == std::string::npos) {
        out += cell;
        continue;
      }
      out += '"';
      for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
      out += '"';
    }
    out += "\n";
  }
  return out;
}

std::string SweepTableMarkdown(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (const std::string& cell : rows[r]) {
      out += ' ';
      out += MarkdownCell(cell) + " |";
    }
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t i = 0; i < rows[0].size(); ++i) out += "---|";
      out += "\n";
    }
  }
  return out;
}

Status WriteSweepSummary(const std::vector<const report::Report*>& points,
                         const std::string& csv_path, std::ostream& out) {
  out << "sweep '" << (points.empty() ? "" : points.front()->scenario_name)
      << "': " << points.size() << " points, median wall time per op (us)\n"
      << FormatSweepTable(SweepTable(points));
  const std::vector<std::vector<std::string>> rows = SweepTable(points, /*full=*/true);
  Status s = report::WriteFileAtomically(csv_path, SweepTableCsv(rows));
  if (!s.ok()) return s;
  std::string md_path = csv_path;
  if (md_path.size() > 4 && md_path.compare(md_path.size() - 4, 4, ".csv") == 0)
    md_path.resize(md_path.size() - 4);
  md_path += ".md";
  s = report::WriteFileAtomically(md_path, SweepTableMarkdown(rows));
  out << (s.ok() ? "table (n, min, p50, p99, max per op): " + csv_path + ", " + md_path : "")
      << "\n";
  return s;
}

}  // namespace vmm
