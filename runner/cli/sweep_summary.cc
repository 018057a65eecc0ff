#include "runner/cli/sweep_summary.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "runner/base/markdown_cell.h"
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

}  // namespace

std::vector<std::vector<std::string>> SweepTable(const std::vector<const report::Report*>& points) {
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
  for (const std::string& op : ops) header.push_back(op + "_us");
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
      std::vector<double> times;
      for (const report::StepRecord& s : r->steps)
        if (s.op == op && s.status != report::StepStatus::kSkipped)
          times.push_back(s.wall_stats ? s.wall_stats->median_us : s.wall_us);
      row.push_back(times.empty() ? "" : Micros(Median(std::move(times))));
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
  const std::vector<std::vector<std::string>> rows = SweepTable(points);
  out << "sweep '" << (points.empty() ? "" : points.front()->scenario_name)
      << "': " << points.size() << " points, median wall time per op (us)\n"
      << FormatSweepTable(rows);
  Status s = report::WriteFileAtomically(csv_path, SweepTableCsv(rows));
  if (!s.ok()) return s;
  std::string md_path = csv_path;
  if (md_path.size() > 4 && md_path.compare(md_path.size() - 4, 4, ".csv") == 0)
    md_path.resize(md_path.size() - 4);
  md_path += ".md";
  s = report::WriteFileAtomically(md_path, SweepTableMarkdown(rows));
  out << (s.ok() ? "table: " + csv_path + ", " + md_path : "") << "\n";
  return s;
}

}  // namespace vmm
