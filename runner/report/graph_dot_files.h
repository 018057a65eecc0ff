// The DOT file of every captured graph, written beside its report:
//   <report path without .json>.<safe graph name>.dot
// (SafeFileName of the graph's name; a graph name captured twice in one run gets the capture
// step's index too: "<stem>.<graph>.<step>.dot"). Each file is written atomically; its base name
// goes into GraphRecord::dot_file so the report points at it.
#pragma once

#include <string>

#include "runner/base/status.h"
#include "runner/report/report.h"

namespace vmm::report {

// Writes the DOT text of every graph of `report` that has one. Returns the first failure (the
// other files are still written); a graph whose file could not be written keeps dot_file empty.
Status WriteGraphDotFiles(const std::string& report_path, Report* report);

}  // namespace vmm::report
