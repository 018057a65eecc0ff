// Small helpers that build YamlValue trees (runner/yaml/yaml_value.h) for generated scenarios;
// runner/yaml/yaml_writer.h turns them into text, a step a line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/base/format.h"
#include "runner/yaml/yaml_value.h"

namespace vmm::gen {

YamlValue Scalar(std::string text);
YamlValue Number(uint64_t n);
YamlValue List(std::vector<YamlValue> items);

// A map built key by key, in order.
class MapBuilder {
 public:
  MapBuilder();
  MapBuilder& Add(const std::string& key, YamlValue value);
  MapBuilder& Add(const std::string& key, const std::string& text) {
    return Add(key, Scalar(text));
  }
  MapBuilder& Add(const std::string& key, const char* text) { return Add(key, Scalar(text)); }
  MapBuilder& Num(const std::string& key, uint64_t n) { return Add(key, Number(n)); }
  MapBuilder& Size(const std::string& key, uint64_t bytes) { return Add(key, SizeLiteral(bytes)); }
  MapBuilder& Flag(const std::string& key, bool on) { return Add(key, on ? "true" : "false"); }
  YamlValue Build() { return std::move(value_); }

 private:
  YamlValue value_;
};

// A step map that starts with `op`.
MapBuilder Op(const std::string& op);

}  // namespace vmm::gen
