// WriteYaml: a YamlValue tree back to YAML text, in the layout scenario files use: the top-level
// map and its maps and lists in block style, everything deeper in flow style, so a step is one
// line:
//
//   name: pages_1gib
//   buffers:
//     R: {shape: [268435456]}
//   steps:
//     - {op: reserve, buffer: R, size: 1073741824}
//
// Scalars are written plain when YAML reads them back as the same text, else double-quoted with
// escapes; a scalar that was quoted in the source and reads as a number, boolean or null stays
// quoted. Loading the output with LoadYaml gives the same tree (positions aside). No yaml-cpp.
#pragma once

#include <string>

#include "runner/yaml/yaml_value.h"

namespace vmm {

std::string WriteYaml(const YamlValue& document);

// One scalar as WriteYaml writes it (plain or double-quoted).
std::string YamlScalarText(const std::string& text, bool quoted);

}  // namespace vmm
