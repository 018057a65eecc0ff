// Where `vmm-run run` writes a report by default: <report-dir>/<safe name>.<backend>.json.
//
// The file name comes from the scenario's `name:`, which the scenario's author controls, so it is
// made safe first (SafeFileName) and can never leave the report directory:
//   - every byte outside [A-Za-z0-9._=,-] (= and , spell sweep points) becomes '_' (so '/', '\',
//   spaces and every byte of a
//     non-ASCII character: "a/../b" -> "a_.._b", "café" -> "caf__");
//   - a leading '.' becomes '_' (no hidden files, never "." or "..");
//   - a name longer than kMaxReportNameBytes keeps its first 91 bytes and ends in '~' and the first
//     8 hex digits of the SHA-256 of the whole name, so names that differ only past the cut (sweep
//     points with long values) still get different files ('~' is never kept from a name, so a
//     cut name never equals an uncut one); an empty name becomes "_".
// Different names can map to the same file ("a b" and "a_b"); the run command refuses the second
// scenario of a run whose report would land on a path already used in that run.
#pragma once

#include <cstddef>
#include <string>

namespace vmm::report {

inline constexpr size_t kMaxReportNameBytes = 100;

std::string SafeFileName(const std::string& name);

// SafeFileName(scenario_name) + "." + SafeFileName(backend) + ".json".
std::string DefaultReportFileName(const std::string& scenario_name, const std::string& backend);

}  // namespace vmm::report
