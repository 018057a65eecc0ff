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
#include "runner/yaml/yaml_value.h"

namespace vmm {

struct YamlLoadLimits {
  int max_depth = 128;           // nesting of maps and lists
  size_t max_values = 20000000;  // after alias expansion
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
