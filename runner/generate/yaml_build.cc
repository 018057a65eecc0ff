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

std::string SizeText(uint64_t bytes) {
  if (bytes != 0 && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + "GiB";
  if (bytes != 0 && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes != 0 && bytes % (1ull << 10) == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes);
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
