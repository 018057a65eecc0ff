// The trial that decides a capability (engine.h ProbeCapability): both backends run it through
// their own Create, AllocProperties and Release, so the host twin and the driver are asked the
// same question in the same words.
#pragma once

#include <string>

#include "runner/base/status.h"
#include "runner/engine/engine.h"

namespace vmm {

// Creates one granule (the minimum granularity of the capability's properties) with
// TrialProps(capability), reads back what was granted and releases it. Ok with *why_not empty
// when the allocation was made and granted the property; ok with *why_not saying what happened
// when the create was refused ("cuMemCreate: CUDA_ERROR_NOT_PERMITTED: ...") or the property was
// not granted; an error Status when the granularity query, the read-back or the release failed.
Status ProbeByTrial(Engine& engine, Capability capability, std::string* why_not);

}  // namespace vmm
