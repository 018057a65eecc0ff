#include "runner/generate/yaml_build.h"

namespace vmm::gen {

YamlValue Scalar(std::string text) {
  YamlValue v;
  v.kind = YamlValue::Kind::kScalar;
  v.scalar = std::move(text);
  return v;
}

YamlValue Number(uint64_t n) { return Scalar(std::to_string(n)); }

YamlValue List(std::vector<YamlValue> items) {
  YamlValue v;
  v.kind = YamlValue::Kind::kSequence;
  v.items = std::move(items);
  return v;
}

MapBuilder::MapBuilder() { value_.kind = YamlValue::Kind::kMap; }

MapBuilder& MapBuilder::Add(const std::string& key, YamlValue value) {
  YamlMember m;
  m.key = key;
  m.value = std::move(value);
  value_.members.push_back(std::move(m));
  return *this;
}

MapBuilder Op(const std::string& op) {
  MapBuilder b;
  b.Add("op", op);
  return b;
}

}  // namespace vmm::gen
