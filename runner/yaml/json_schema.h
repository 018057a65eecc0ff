// JsonSchema: a JSON Schema (draft-07) document compiled for fast validation of YamlValue trees.
//
// Supports the subset vmm-run's schemas use, and refuses anything else at compile time (so a new
// keyword in a schema fails loudly instead of being ignored):
//   assertions  type, enum, const, pattern, minimum, maximum, minLength, maxLength, minItems,
//               maxItems, required, properties, additionalProperties, items (one schema), allOf,
//               anyOf, oneOf, if/then/else, $ref (local JSON pointers "#/...")
//   annotations $schema, $id, $comment, title, description, default, examples, definitions,
//               errorMessage (ajv-errors' plain-string form; "${0}" stands for the value)
// An allOf member of the form {if: {required: [K], properties: {K: {const: V}}}, then: S} compiles
// into a dispatch table K=V -> S (how the scenario schema selects a step's fields by its `op`).
//
// Ownership: a JsonSchema owns its document and its nodes; SchemaNode pointers stay valid for the
// JsonSchema's lifetime (also across moves). Immutable after Compile, so safe to share between
// threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "runner/base/status.h"
#include "runner/yaml/yaml_value.h"

namespace vmm {

enum JsonType : uint32_t {
  kJsonNull = 1,
  kJsonBoolean = 2,
  kJsonInteger = 4,
  kJsonNumber = 8,
  kJsonString = 16,
  kJsonArray = 32,
  kJsonObject = 64,
};

struct SchemaNode {
  std::string pointer;  // where the node is in the document, e.g. "#/definitions/size"

  // Annotations (pointers into the owning JsonSchema's document).
  std::string title, description, error_message;
  const YamlValue* default_value = nullptr;
  std::vector<const YamlValue*> examples;

  // Assertions.
  uint32_t types = 0;  // JsonType bits; 0 = any type
  const YamlValue* const_value = nullptr;
  bool has_enum = false;
  std::vector<std::string> enum_values;  // scalars, as written
  std::optional<std::regex> pattern;
  std::string pattern_source;
  std::optional<double> minimum, maximum;
  std::optional<uint64_t> min_length, max_length, min_items, max_items;
  std::vector<std::string> required;
  std::vector<std::pair<std::string, const SchemaNode*>> properties;  // schema order
  bool additional_allowed = true;          // additionalProperties: false -> false
  const SchemaNode* additional = nullptr;  // additionalProperties: {schema}
  const SchemaNode* items = nullptr;
  std::vector<const SchemaNode*> all_of, any_of, one_of;
  const SchemaNode* if_schema = nullptr;
  const SchemaNode* then_schema = nullptr;
  const SchemaNode* else_schema = nullptr;
  const SchemaNode* ref = nullptr;  // $ref target (siblings other than annotations are refused)

  // Dispatch compiled from if/const/then members of allOf (see the file comment).
  std::string discriminator;
  std::vector<std::pair<std::string, const SchemaNode*>> cases;

  const SchemaNode* Property(std::string_view name) const;
  const SchemaNode* Case(std::string_view value) const;
  // Follows $ref to the node that holds the assertions.
  const SchemaNode* Resolved() const;
};

class JsonSchema {
 public:
  // Compiles `schema_json` (JSON, read as YAML). Fails with kInvalidInput naming the file position
  // or JSON pointer of the first problem (bad JSON, unsupported keyword, dangling $ref, bad regex).
  static StatusOr<JsonSchema> Compile(const std::string& schema_json);

  JsonSchema(JsonSchema&&) noexcept;
  JsonSchema& operator=(JsonSchema&&) noexcept;
  ~JsonSchema();

  const SchemaNode& root() const;
  // The node at a local JSON pointer ("#", "#/definitions/step"), or nullptr.
  const SchemaNode* Find(const std::string& pointer) const;
  const YamlValue& document() const;

 private:
  struct Data;
  explicit JsonSchema(std::unique_ptr<Data> data);
  std::unique_ptr<Data> data_;
};

// Validation helpers shared by the validator and the docs generator.
bool YamlIsInteger(const YamlValue& v, int64_t* out = nullptr);
bool YamlIsNumber(const YamlValue& v, double* out = nullptr);
bool YamlIsBoolean(const YamlValue& v, bool* out = nullptr);
// The JsonType bits `v` can be read as (YAML scalars are weakly typed: "12" is integer, number and
// string, whether quoted or not, like valijson's weak typing; null is only null).
uint32_t YamlTypes(const YamlValue& v);
// "an integer", "a map", "true or false", ... joined with " or ".
std::string JsonTypePhrase(uint32_t types);

}  // namespace vmm
