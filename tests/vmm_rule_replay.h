// Sends a scenario's VMM steps straight to an Engine, without the validator, so a test can see what
// a backend does with a step the validator would refuse (the VMM rule table, runner/vocab/
// vmm_rules.h). Test support for vmm_tests (host engine) and vmm_gpu_tests (CUDA engine).
//
// Steps run in order; names are resolved as they come (a released alloc or freed buffer keeps its
// old handle or address, so the next step re-uses the dead value, which is the point). Defaults
// follow the plan builder: reserve = the buffer's bytes rounded up to the granularity; map = the
// whole alloc from alloc_offset; set_access and unmap = the rest of the reservation from offset;
// fill = the whole buffer. Supported ops: reserve, free, create, release, map, set_access, unmap,
// fill, capture (of memsets), instantiate, check_range (the address asked about only).
#pragma once

#include "runner/base/status.h"
#include "runner/engine/engine.h"
#include "runner/scenario/scenario.h"

namespace vmm::testing_rules {

// Runs every step of `scenario` on `engine`. Every step but the last must succeed: otherwise, or
// for an op this replay does not know, returns an error naming the step. The last step's status
// goes to *last.
Status ReplayOnEngine(const Scenario& scenario, Engine* engine, Status* last);

}  // namespace vmm::testing_rules
