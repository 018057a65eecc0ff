#include "runner/report/graph_dot_files.h"

#include <set>

#include "runner/report/atomic_file.h"
#include "runner/report/report_path.h"

namespace vmm::report {

Status WriteGraphDotFiles(const std::string& report_path, Report* report) {
  std::string stem = report_path;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0)
    stem.resize(stem.size() - 5);
  const size_t slash = stem.find_last_of('/');
  Status first;
  std::set<std::string> used;
  for (GraphRecord& g : report->graphs) {
    if (g.dot.empty()) continue;
    std::string path = stem + "." + SafeFileName(g.graph) + ".dot";
    if (!used.insert(path).second) {
      path = stem + "." + SafeFileName(g.graph) + "." + std::to_string(g.capture_step) + ".dot";
      used.insert(path);
    }
    Status s = WriteFileAtomically(path, g.dot);
    if (!s.ok()) {
      if (first.ok()) first = s.WithContext(path);
      continue;
    }
    g.dot_file = slash == std::string::npos ? path : path.substr(slash + 1);
  }
  return first;
}

}  // namespace vmm::report
