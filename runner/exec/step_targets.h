// What each step acts on, by name, for the report: filled after the run from the plan, so the
// timed path never pays for it. `vmm-run timeline` draws lanes and blocks from these names.
#pragma once

#include <vector>

#include "runner/plan/plan.h"
#include "runner/report/report.h"

namespace vmm {

// The plan's buffers and views, in declaration order.
std::vector<report::BufferRecord> BufferTable(const Plan& plan);

// Sets `targets` on every record (capture bodies included) from the plan step it records:
// records and plan steps correspond one to one, in order.
void AddTargets(const Plan& plan, std::vector<report::StepRecord>* records);

}  // namespace vmm
