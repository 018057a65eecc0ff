// BuildScenario: a schema-valid YamlValue document -> the typed Scenario tree.
//
// Runs after SchemaValidator accepted the document, so shapes and types are known to be right;
// what is left to report is what a schema cannot say: sizes that overflow 64 bits. Absent optional
// keys take the schema's `default` (with `set` false and the location of the enclosing map);
// defaults that depend on other values (a reservation's size, a mapping's size) stay 0 for
// runner/plan to compute.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/scenario/scenario.h"
#include "runner/yaml/json_schema.h"
#include "runner/yaml/yaml_value.h"

namespace vmm {

// `schema` is the compiled scenario schema the document was validated against (its defaults are
// applied). Returns nullopt after appending diagnostics when a value cannot be represented.
std::optional<Scenario> BuildScenario(const YamlValue& document, const JsonSchema& schema,
                                      const std::string& file,
                                      std::vector<Diagnostic>* diagnostics);
// The same, freeing each step's part of `document` once its step is built (the document is left
// empty): the peak memory is the larger of the two, not their sum.
std::optional<Scenario> BuildScenario(YamlValue&& document, const JsonSchema& schema,
                                      const std::string& file,
                                      std::vector<Diagnostic>* diagnostics);

}  // namespace vmm
