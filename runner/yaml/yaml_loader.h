// LoadYaml: YAML text -> YamlValue, the one place an instance document meets yaml-cpp.
//
// Every yaml-cpp exception stops here and becomes a Diagnostic ("invalid YAML: ..." at the
// offending position, 1-based). Besides syntax, the loader reports what yaml-cpp accepts silently:
// duplicate keys (reported at the second occurrence, naming the first), keys that are not scalars,
// more than one document in the file, and documents that alias-expand past a size limit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/base/limits.h"
#include "runner/yaml/yaml_value.h"

namespace vmm {

// Bounds that keep hostile documents cheap (docs/limits-and-safety.md). Values are counted as they
// are built, aliases at the full size of what they expand to and before anything is copied, so a
// refused document never costs more than max_values values (about 110 bytes each: ~55 MB and
// ~0.25 s of CPU at the default). A step takes 5 to 15 values, so the default admits scenarios of
// tens of thousands of steps (the largest committed one has under 100).
struct YamlLoadLimits {
  // Defaults: the yaml_depth and yaml_values limits (base/limits.h), 128 and 500,000.
  int max_depth = static_cast<int>(LimitValue(Limit::kYamlDepth));  // nesting of maps and lists
  // scalars, maps and lists (keys included) after alias expansion
  size_t max_values = LimitValue(Limit::kYamlValues);
};

// Parses `text`, the contents of `file` (used only for locations). Returns the root value (kNull
// for a document with no content) or nullopt when the text cannot be read as one YAML document.
// Problems are appended to *diagnostics; duplicate or non-scalar keys are reported but the tree is
// still returned (without the non-scalar keys), so the caller can report more in the same pass.
std::optional<YamlValue> LoadYaml(const std::string& text, const std::string& file,
                                  std::vector<Diagnostic>* diagnostics,
                                  const YamlLoadLimits& limits = {});

// True when `text` holds nothing but whitespace and comments.
bool IsBlankYaml(const std::string& text);

}  // namespace vmm
