// BuildScenario: a schema-valid YamlValue document -> the typed Scenario tree.
//
// Runs after SchemaValidator accepted the document, so shapes and types are known to be right;
// what is left to report is what a schema cannot say: sizes that overflow 64 bits. Absent optional
// keys take the schema's `default` (with `set` false and the location of the enclosing map);
// defaults that depend on other values (a reservation's size, a mapping's size) stay 0 for
// runner/plan to compute.
#pragma once

#include <memory>
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

class ScenarioTreeBuilder;

// Builds a scenario whose top-level steps arrive one at a time (a streamed expansion,
// expander.h's ExpandedStepSink): Reserve, Add each step in order (its tree may be freed as soon
// as Add returns), then Finish with the document that holds the rest. The steps come before the
// document's own `steps` (normally none), and the diagnostics are those BuildScenario would give,
// in its order.
class StepwiseScenarioBuilder {
 public:
  StepwiseScenarioBuilder(const JsonSchema& schema, const std::string& file,
                          std::vector<Diagnostic>* diagnostics);
  ~StepwiseScenarioBuilder();
  StepwiseScenarioBuilder(const StepwiseScenarioBuilder&) = delete;
  StepwiseScenarioBuilder& operator=(const StepwiseScenarioBuilder&) = delete;

  void Reserve(size_t steps) { steps_.reserve(steps); }
  void Add(const YamlValue& step);
  std::optional<Scenario> Finish(const YamlValue& document);

 private:
  std::vector<Diagnostic>* diagnostics_;
  std::vector<Diagnostic> step_diagnostics_;  // appended after the document's own, as BuildScenario
  std::unique_ptr<ScenarioTreeBuilder> builder_;
  std::vector<Step> steps_;
};

}  // namespace vmm
