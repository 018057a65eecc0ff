// YamlValue: a parsed YAML document as plain C++ values, each with its 1-based source position.
//
// The loader (yaml_loader.h) is the only code that touches yaml-cpp; everything after it (schema
// validation, the typed scenario builder, the diff-config parser) works on this tree, so it can be
// tested from strings and never sees a yaml-cpp exception. Values own their children; the tree is
// immutable after loading and safe to read from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runner/base/diagnostic.h"

namespace vmm {

struct YamlMember;

// Where an expanded value was written, when that is not simply the document's own file: the
// scenario expander (runner/scenario/expander.h) sets it on values copied out of a loop body or a
// fragment file. The expansion owns the origins and outlives every tree that points at them; the
// locations made from a value share its origin's SourceOrigin.
struct YamlOrigin {
  std::shared_ptr<const SourceOrigin> source;  // never null: the template's file and context
};

struct YamlValue {
  enum class Kind : uint8_t { kNull, kScalar, kSequence, kMap };

  // The small members first, packed (a loop's expansion makes hundreds of thousands of values).
  Kind kind = Kind::kNull;
  bool quoted = false;  // kScalar: written in quotes (always a string, never a number or bool)
  int line = 0;         // 1-based; 0 = unknown
  int column = 0;       // 1-based
  const YamlOrigin* origin = nullptr;  // nullptr: written once, in the document's own file
  std::string scalar;                  // kScalar: the text as written (quotes removed)
  std::vector<YamlValue> items;        // kSequence
  std::vector<YamlMember> members;  // kMap, in file order; duplicates are kept (the loader reports
                                    // them) and lookups return the first

  bool IsNull() const { return kind == Kind::kNull; }
  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsSequence() const { return kind == Kind::kSequence; }
  bool IsMap() const { return kind == Kind::kMap; }

  // The first member named `key`, or nullptr (also when this is not a map).
  const YamlValue* Find(std::string_view key) const;
};

struct YamlMember {
  std::string key;
  int line = 0;  // position of the key
  int column = 0;
  YamlValue value;
};

// Where `line`:`column` of a value with `origin` is, for a document read from `file`.
SourceLoc LocationOf(const std::string& file, const YamlOrigin* origin, int line, int column);
inline SourceLoc LocationOf(const std::string& file, const YamlValue& v) {
  return LocationOf(file, v.origin, v.line, v.column);
}
// The same for code that makes many locations (one per key of every step): `document` is the
// document's own origin, made once, and every location shares it or the value's origin.
SourceLoc LocationOf(const std::shared_ptr<const SourceOrigin>& document, const YamlOrigin* origin,
                     int line, int column);
inline SourceLoc LocationOf(const std::shared_ptr<const SourceOrigin>& document,
                            const YamlValue& v) {
  return LocationOf(document, v.origin, v.line, v.column);
}

// How a value reads in a message: "'abc'" for scalars (long ones shortened), "a map", "a list",
// "nothing" for null.
std::string DescribeYamlValue(const YamlValue& value);

}  // namespace vmm
