// DiffPaths: reads BASE and NEW (two files or two directories) and pairs reports by scenario.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "runner/report/diff.h"
#include "runner/report/report_io.h"

namespace vmm::report {
namespace {

namespace fs = std::filesystem;

struct Loaded {
  std::string path;
  Report report;
};

// The *.json regular files of `dir`, sorted by name, read as reports.
StatusOr<std::vector<Loaded>> ReadDirectory(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json" && it->is_regular_file(ec)) {
      paths.push_back(it->path().string());
    }
  }
  if (ec) return InvalidInput("cannot list '" + dir + "': " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<Loaded> out;
  for (const std::string& path : paths) {
    StatusOr<Report> r = ReadReport(path);
    if (!r.ok()) return r.status();
    out.push_back(Loaded{path, std::move(r).value()});
  }
  return out;
}

// True when two of `reports` (one pairing group: one scenario name and sweep point, PairingKey)
// share a backend: the same run twice.
bool HasDuplicates(const std::vector<const Loaded*>& reports) {
  std::set<std::string> backends;
  for (const Loaded* l : reports) {
    if (!backends.insert(l->report.backend).second) return true;
  }
  return false;
}

std::string FileList(const std::vector<const Loaded*>& files) {
  std::string out;
  for (const Loaded* f : files) {
    out += (out.empty() ? "" : ", ") + fs::path(f->path).filename().string();
  }
  return out;
}

// What pairs reports: the scenario name, and for a sweep its point ("pages_sweep [pages=4]").
std::string PairingKey(const Report& r) {
  if (r.sweep_point.empty()) return r.scenario_name;
  std::string key = r.scenario_name + " [";
  for (size_t i = 0; i < r.sweep_point.size(); ++i)
    key += (i == 0 ? "" : ",") + r.sweep_point[i].first + "=" + r.sweep_point[i].second;
  return key + "]";
}

// Reports grouped by pairing key (scenario name + sweep point), keys in order of first appearance.
struct ByScenario {
  std::map<std::string, std::vector<const Loaded*>> by_name;
  std::vector<std::string> order;
  explicit ByScenario(const std::vector<Loaded>& reports) {
    for (const Loaded& l : reports) {
      const std::string key = PairingKey(l.report);
      auto& list = by_name[key];
      if (list.empty()) order.push_back(key);
      list.push_back(&l);
    }
  }
  std::vector<const Loaded*> Get(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? std::vector<const Loaded*>{} : it->second;
  }
};

void DiffDirectories(const std::vector<Loaded>& base, const std::vector<Loaded>& now,
                     const DiffConfig& config, DiffResult* out) {
  const ByScenario b(base), n(now);
  auto ambiguous = [&](const std::string& name, const std::vector<const Loaded*>& bs,
                       const std::vector<const Loaded*>& ns) {
    const bool duplicates = HasDuplicates(bs) || HasDuplicates(ns);
    if (duplicates) ++out->duplicates;
    out->rows.push_back(DiffRow{
        RowKind::kAmbiguous, name, "", "scenario",
        bs.empty() ? std::nullopt : std::optional(FileList(bs)),
        ns.empty() ? std::nullopt : std::optional(FileList(ns)),
        duplicates ? "scenario '" + name +
                         "' has several reports of the same backend in one directory (a run "
                         "repeated or copied?): keep one per scenario; this fails the diff "
                         "unless --allow-duplicates"
                   : "scenario '" + name +
                         "' has several reports in one directory: keep one per scenario"});
  };
  for (const std::string& name : b.order) {
    const auto bs = b.Get(name);
    const auto ns = n.Get(name);
    if (bs.size() > 1 || ns.size() > 1) {
      ambiguous(name, bs, ns);
    } else if (ns.empty()) {
      out->rows.push_back(DiffRow{RowKind::kMissing, name, "", "scenario", FileList(bs),
                                  std::nullopt,
                                  "scenario '" + name + "' has a report in BASE only"});
    } else {
      DiffReports(bs.front()->report, ns.front()->report, config, out);
    }
  }
  for (const std::string& name : n.order) {
    if (!b.Get(name).empty()) continue;
    const auto ns = n.Get(name);
    if (ns.size() > 1) {
      ambiguous(name, {}, ns);
    } else {
      out->rows.push_back(DiffRow{RowKind::kAdded, name, "", "scenario", std::nullopt, FileList(ns),
                                  "scenario '" + name + "' has a report in NEW only"});
    }
  }
}

}  // namespace

StatusOr<DiffResult> DiffPaths(const std::string& base, const std::string& now,
                               const DiffConfig& config) {
  std::error_code ec;
  const bool base_dir = fs::is_directory(base, ec);
  const bool new_dir = fs::is_directory(now, ec);
  DiffResult result;
  if (base_dir != new_dir) {
    return InvalidInput("'" + (base_dir ? base : now) + "' is a directory but '" +
                        (base_dir ? now : base) +
                        "' is not: give two report files or two directories");
  }
  if (base_dir) {
    StatusOr<std::vector<Loaded>> b = ReadDirectory(base);
    if (!b.ok()) return b.status();
    StatusOr<std::vector<Loaded>> n = ReadDirectory(now);
    if (!n.ok()) return n.status();
    DiffDirectories(*b, *n, config, &result);
    return result;
  }
  StatusOr<Report> b = ReadReport(base);
  if (!b.ok()) return b.status();
  StatusOr<Report> n = ReadReport(now);
  if (!n.ok()) return n.status();
  // Two files are compared even when their scenario names differ: the user paired them.
  if (b->scenario_name != n->scenario_name) {
    result.rows.push_back(DiffRow{RowKind::kInfo, b->scenario_name, "", "scenario name",
                                  b->scenario_name, n->scenario_name,
                                  "the two reports are of differently named scenarios"});
  }
  DiffReports(*b, *n, config, &result);
  return result;
}

}  // namespace vmm::report
