// Diff config files (`vmm-run diff --config FILE`): YAML in, report::DiffConfig out.
//
// The file is validated against schemas/diff-config.schema.json (embedded in the binary) with the
// scenario layer's SchemaValidator, so mistakes read like scenario mistakes, located at the
// offending key or value and all reported in one pass:
//   ci.yaml:3:3: error: unknown key 'floor' in timing, did you mean 'floor_us'?
//   ci.yaml:2:13: error: 'relative' must be at least 0, got '-1'
// Every key is optional; absent keys keep the DiffConfig defaults, and a metric override
// (timing.metrics.<metric>) starts from the file's `timing` values. An empty file is the defaults.
// This is the only place a diff config meets YAML: runner/report/diff_config.h stays pure C++
// (a header-only struct, so vmm_scenario gains no link dependency on vmm_report).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/report/diff_config.h"

namespace vmm {

// Parses `text`, the contents of `file` (used for locations). Returns nullopt with every problem
// appended to *diagnostics.
std::optional<report::DiffConfig> ParseDiffConfig(const std::string& text, const std::string& file,
                                                  std::vector<Diagnostic>* diagnostics);

// Reads `path` and parses it; an unreadable file is one diagnostic ("cannot read the file ...").
std::optional<report::DiffConfig> LoadDiffConfigFile(const std::string& path,
                                                     std::vector<Diagnostic>* diagnostics);

// The text of schemas/diff-config.schema.json as embedded in this binary.
const char* DiffConfigSchemaText();

}  // namespace vmm
