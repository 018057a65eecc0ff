// PartialScenario: what is left of a scenario once the top-level steps that hold schema errors are
// set aside, so that validation reports the state errors of the steps that are fine in the same
// pass as the schema errors (a reserve with a misspelt key and, ten steps later, a map of a buffer
// nobody reserved: both, at once).
//
// A step that mentions a name a dropped step mentions (a buffer it would have reserved, an alloc it
// would have made, its own name) is tainted: its state errors would be follow-ons of the dropped
// step, so they are not reported. Only plain scenarios are repaired: when the errors are not all
// inside top-level steps, point into another file, or the scenario uses vars, loops or includes
// (whose steps do not map back to lines one to one), the schema errors are reported alone.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/scenario/scenario.h"
#include "runner/yaml/yaml_value.h"

namespace vmm {

class SchemaValidator;

struct PartialScenario {
  std::optional<Scenario> scenario;          // none: the errors could not be set aside
  std::vector<std::pair<int, int>> tainted;  // [first, last] lines of the tainted steps
  bool Tainted(int line) const;
};

// Sets *partial from `doc` (as loaded, not expanded) and the schema `errors` found in it.
void SetAsideBadSteps(const YamlValue& doc, const std::string& file,
                      const std::vector<Diagnostic>& errors, const SchemaValidator& validator,
                      PartialScenario* partial);

}  // namespace vmm
