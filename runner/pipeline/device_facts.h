// ReadDeviceFacts: the device facts (runner/scenario/expr.h: device_memory, device_free) of the
// device a run would use, for a scenario whose text names one. It opens the engine `request`
// selects (with the default granularity when the request has none), asks it for its memory
// (cuMemGetInfo on CUDA; the twin's emulated memory), and closes it again, so the run's own engine
// starts from a clean device. Nothing is read, and no engine opened, when the text names none or
// `expand` already holds them (an isolate child gets its parent's).
#pragma once

#include <string>

#include "runner/base/status.h"
#include "runner/engine/select/engine_select.h"
#include "runner/scenario/expander.h"

namespace vmm {

Status ReadDeviceFacts(const std::string& text, EngineRequest request, ExpandOptions* expand);

// VMMRUN_HOST_MEMORY, the host twin's memory (docs/backends.md) into request->host_memory; an
// error naming the bad value when it is not a size. Unset leaves the request as it is.
Status ApplyHostMemoryEnvironment(EngineRequest* request);

}  // namespace vmm
