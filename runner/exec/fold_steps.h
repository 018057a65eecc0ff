// Folding a report's repeated steps (`report: {fold_loops: true}`): a step written once in the file
// and run many times (a for loop's body, a fragment used repeatedly) becomes one record per step
// template and status, so a 10,000-cycle soak writes tens of records, not 80,000.
//
// Contract, for the records of one template (same file:line:column) with the same status:
//  - only status ok (with no check, or a passing one) and status skipped fold; failed and
//    unchecked records always stay as they are, where they are;
//  - a group of two or more becomes one record at the first member's place; `folded` says how
//    many, the first and last index and the last name;
//  - `wall_stats` / `gpu_stats` are computed over the members' first-execution times;
//  - an address, detail, target or check value shared by every member is kept; a data hash
//    (detail key ending in "_hash") that varies is replaced by a hash of the members' values in
//    order (so two backends that agree on every iteration agree on the folded hash); any other
//    varying value is dropped and named in `folded.varying`.
// The summary is not touched: it still counts every step that ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/report/report.h"

namespace vmm {

// `template_of[i]` identifies the template of the record with index i (records are the top-level
// steps in order; capture bodies are left alone): records of equal ids come from one template.
void FoldRepeatedSteps(const std::vector<uint32_t>& template_of,
                       std::vector<report::StepRecord>* records);

}  // namespace vmm
