// `requires:` against the device a run got: what the scenario needs that this run lacks.
#pragma once

#include <string>

#include "runner/engine/engine.h"
#include "runner/plan/plan.h"
#include "runner/report/report.h"
#include "runner/scenario/scenario.h"

namespace vmm {

// The first requirement `info` does not meet, in words ("requires 2 devices; this cuda backend
// has 1"), or "" when every requirement is met.
std::string UnmetRequirement(const Requirements& requires_, const DeviceInfo& info);

// The report's record of `info` as the scenario's device `scenario_device`.
report::DeviceRecord DeviceRecordOf(const DeviceInfo& info, int scenario_device);

// Describes every device the plan names (plan.used_devices, mapped to ordinals by
// ScenarioDeviceOrdinal) into `devices`, and returns what the run lacks, in words, or "": a device
// without VMM support, or a peer access the plan needs (Plan::peer_access) that the devices cannot
// give ("device 1 (ordinal 1) cannot access the memory of device 0 (ordinal 0):
// cuDeviceCanAccessPeer is 0"). Call only when UnmetRequirement found nothing (every device the
// plan names exists).
std::string DescribeDevices(const Plan& plan, Engine& engine,
                            std::vector<report::DeviceRecord>* devices);
// The first capability of `requires_.capabilities` that `engine` lacks, in words ("requires
// capability 'compression'; NVIDIA H200 lacks it: a trial create of 2 MiB succeeded, but
// compression was not granted (read back uncompressed)"), or "" when it has them all. Each is
// decided by Engine::ProbeCapability (a trial create) before the run; a probe that fails in a way
// that says nothing about the capability counts as lacking it, with its error.
std::string UnmetCapability(const Requirements& requires_, Engine& engine);

}  // namespace vmm
