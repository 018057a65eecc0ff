// `requires:` against the device a run got: what the scenario needs that this run lacks.
#pragma once

#include <string>

#include "runner/engine/engine.h"
#include "runner/scenario/scenario.h"

namespace vmm {

// The first requirement `info` does not meet, in words ("requires 2 devices; this cuda backend
// has 1"), or "" when every requirement is met.
std::string UnmetRequirement(const Requirements& requires_, const DeviceInfo& info);

// The first capability of `requires_.capabilities` that `engine` lacks, in words ("requires
// capability 'compression'; NVIDIA H200 lacks it: a trial create of 2 MiB succeeded, but
// compression was not granted (read back uncompressed)"), or "" when it has them all. Each is
// decided by Engine::ProbeCapability (a trial create) before the run; a probe that fails in a way
// that says nothing about the capability counts as lacking it, with its error.
std::string UnmetCapability(const Requirements& requires_, Engine& engine);

}  // namespace vmm
