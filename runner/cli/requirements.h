// `requires:` against the device a run got: what the scenario needs that this run lacks.
#pragma once

#include <string>

#include "runner/engine/engine.h"
#include "runner/scenario/scenario.h"

namespace vmm {

// The first requirement `info` does not meet, in words ("requires 2 devices; this cuda backend
// has 1"), or "" when every requirement is met.
std::string UnmetRequirement(const Requirements& requires_, const DeviceInfo& info);

}  // namespace vmm
