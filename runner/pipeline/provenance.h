// Fills the provenance part of a report (tool, argv, scenario identity, backend, device, time).
#pragma once

#include <string>
#include <vector>

#include "runner/engine/engine.h"
#include "runner/report/report.h"

namespace vmm {

struct ProvenanceInput {
  std::vector<std::string> argv;
  std::string scenario_path;
  std::string scenario_text;  // hashed with SHA-256
  std::string scenario_name;
  uint64_t granularity = 0;
  std::string backend_reason;
};

void FillProvenance(const ProvenanceInput& input, const DeviceInfo& device, report::Report* out);

// Current UTC time as "2026-11-30T00:27:12Z".
std::string UtcNowIso8601();

}  // namespace vmm
