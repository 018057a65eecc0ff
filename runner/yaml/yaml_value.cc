#include "runner/yaml/yaml_value.h"

namespace vmm {

const YamlValue* YamlValue::Find(std::string_view key) const {
  for (const YamlMember& m : members)
    if (m.key == key) return &m.value;
  return nullptr;
}

SourceLoc LocationOf(const std::string& file, const YamlOrigin* origin, int line, int column) {
  if (origin == nullptr) return SourceLoc{file, line, column};
  return SourceLoc{origin->source, line, column};
}

SourceLoc LocationOf(const std::shared_ptr<const SourceOrigin>& document, const YamlOrigin* origin,
                     int line, int column) {
  return SourceLoc{origin != nullptr ? origin->source : document, line, column};
}

std::string DescribeYamlValue(const YamlValue& value) {
  switch (value.kind) {
    case YamlValue::Kind::kNull:
      return "nothing";
    case YamlValue::Kind::kSequence:
      return "a list";
    case YamlValue::Kind::kMap:
      return "a map";
    case YamlValue::Kind::kScalar:
      break;
  }
  constexpr size_t kMaxShown = 40;
  if (value.scalar.size() <= kMaxShown) return "'" + value.scalar + "'";
  return "'" + value.scalar.substr(0, kMaxShown) + "...'";
}

}  // namespace vmm
