// Scenario files in, typed Scenario out: the front door of runner/scenario.
//
// ParseScenario reads YAML (yaml-cpp, confined to yaml_loader.cc), validates it against
// schemas/scenario.schema.json (embedded in the binary at build time) and builds the typed tree.
// Every problem becomes a Diagnostic located at the offending key or value (1-based line:column);
// all problems are reported in one pass, in file order. Nothing here throws.
//
// The schema is compiled once per process, on first use, and shared (thread-safe). Callers that
// prefer to own it (benchmarks, servers) can hold a ScenarioParser instead.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/base/status.h"
#include "runner/scenario/expander.h"
#include "runner/scenario/partial_scenario.h"
#include "runner/scenario/scenario.h"

namespace vmm {

class SchemaValidator;

// Parses and schema-validates `text`, the contents of `file`. Returns the typed tree, or nullopt
// with every problem appended to *diagnostics (all errors in one pass, file order). Text that is
// blank ("FILE:1:1: ... the file is empty ...") or not valid UTF-8 (one diagnostic at the first bad
// byte: "FILE:3:9: error: the file is not valid UTF-8 (byte 0xff); save the scenario as UTF-8") is
// refused before YAML parsing. Bounded: see YamlLoadLimits and docs/limits-and-safety.md.
std::optional<Scenario> ParseScenario(const std::string& text, const std::string& file,
                                      std::vector<Diagnostic>* diagnostics);

// The same with `--set` overrides and an include reader (expander.h). The source form (vars,
// loops, includes) is expanded first, then the expanded form is validated; errors point at the
// source. When `expanded` is given it receives the expanded document (a copy of the document when
// there was nothing to expand). When `partial` is given and the schema errors are all inside
// top-level steps, it receives the scenario without them (partial_scenario.h), for the plan's
// state errors in the same pass (AddStateErrors, plan.h).
std::optional<Scenario> ParseScenario(const std::string& text, const std::string& file,
                                      const ExpandOptions& options,
                                      std::vector<Diagnostic>* diagnostics,
                                      Expansion* expanded = nullptr,
                                      PartialScenario* partial = nullptr);

// Reads `path` with ReadInputFile (base/input_file.h: a regular file of at most the input_bytes
// limit, base/limits.h) and parses it; an unreadable file is one diagnostic ("cannot read the file:
// ...").
std::optional<Scenario> LoadScenarioFile(const std::string& path,
                                         std::vector<Diagnostic>* diagnostics);
std::optional<Scenario> LoadScenarioFile(const std::string& path, const ExpandOptions& options,
                                         std::vector<Diagnostic>* diagnostics,
                                         Expansion* expanded = nullptr);

// The points of the scenario's `sweep:` (expander.h, SweepPoints); empty when it has none. YAML
// errors are left for ParseScenario to report (then the list is empty).
std::optional<std::vector<SweepPoint>> ReadSweepPoints(const std::string& text,
                                                       const std::string& file,
                                                       const std::vector<VarOverride>& set,
                                                       std::vector<Diagnostic>* diagnostics);

// `vmm-run steps`: every op with each field's type, default and description, generated from the
// schema.
std::string DescribeSteps();
// One op; for an unknown op returns "" and sets *error ("unknown op 'x', did you mean 'y'?").
std::string DescribeStep(const std::string& op, std::string* error);

// The text of schemas/scenario.schema.json as embedded in this binary.
const char* ScenarioSchemaText();

// Owns a compiled scenario schema. Move-only; const methods are thread-safe.
class ScenarioParser {
 public:
  // Compiles the embedded schema (fails only if the build embedded a broken schema).
  static StatusOr<ScenarioParser> Create();

  ScenarioParser(ScenarioParser&&) noexcept;
  ScenarioParser& operator=(ScenarioParser&&) noexcept;
  ~ScenarioParser();

  // Same contract as ParseScenario.
  std::optional<Scenario> Parse(const std::string& text, const std::string& file,
                                std::vector<Diagnostic>* diagnostics) const {
    return Parse(text, file, ExpandOptions{}, diagnostics);
  }
  std::optional<Scenario> Parse(const std::string& text, const std::string& file,
                                const ExpandOptions& options, std::vector<Diagnostic>* diagnostics,
                                Expansion* expanded = nullptr,
                                PartialScenario* partial = nullptr) const;

  const SchemaValidator& validator() const { return *validator_; }

 private:
  explicit ScenarioParser(std::unique_ptr<SchemaValidator> validator);
  std::unique_ptr<SchemaValidator> validator_;
};

}  // namespace vmm
