// SchemaValidator: validates YamlValue trees against a JSON Schema and explains every mistake in
// one clean, actionable sentence, located at the offending key or value.
//
// Reusable for any schema: the scenario parser uses it with schemas/scenario.schema.json and the
// diff-config parser with its own. Messages are built from the schema itself:
//   unknown key    "unknown key 'sizee' in step 'reserve', did you mean 'size'?"   (from
//   properties)
//                  "key 'repeat' is not allowed in step 'reserve' (only in fill, ...)" (other
//                  cases)
//   missing key    "step 'map' needs key 'alloc'"                                    (required)
//   wrong type     "'seed' must be an integer, got 'abc'"                            (type)
//   bad enum       "'access' must be one of 'read_write', 'read', 'none', got 'rw'"  (enum)
//   dispatch key   "unknown op 'reserv', did you mean 'reserve'?"                    (allOf
//   if/then) titled forms   "'size' must be a size such as 2MiB or 4096, got '2MB'; did you mean
//   '2MiB'?"
//                  (anyOf/oneOf under a `title`, `examples`, plus the options' suggest hook)
// Objects are named by their schema `title` and their dispatch value or map key ("step 'reserve'",
// "buffer 'A'"); the document root is "the top level". One mistake gives one message: a missing
// key that an unknown key was a likely misspelling of is not reported again, and the branches of
// a failed anyOf are summarised instead of listed.
//
// Thread safety: immutable after Create; Validate may run concurrently.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/base/status.h"
#include "runner/yaml/json_schema.h"
#include "runner/yaml/yaml_value.h"

namespace vmm {

struct SchemaValidatorOptions {
  // For a scalar that failed a schema titled `title`, a corrected value to suggest ("" for none).
  std::function<std::string(const std::string& title, const std::string& value)> suggest;
};

class SchemaValidator {
 public:
  // Compiles `schema_json`; fails like JsonSchema::Compile.
  static StatusOr<SchemaValidator> Create(const std::string& schema_json,
                                          SchemaValidatorOptions options = {});

  // Validates `document` (the contents of `file`) against the schema root. Appends one diagnostic
  // per mistake to *diagnostics, in file order, and returns true when there was none.
  bool Validate(const YamlValue& document, const std::string& file,
                std::vector<Diagnostic>* diagnostics) const;

  // Validates `item` as element `index` of the root's list `list_key` (a document whose list is
  // given an item at a time, a streamed expansion): the same diagnostics, named and located as
  // Validate gives them for that element of the whole document. False when the root has no such
  // list of items in its schema (then nothing is checked).
  bool ValidateListItem(const YamlValue& item, std::string_view list_key, size_t index,
                        const std::string& file, std::vector<Diagnostic>* diagnostics) const;

  const JsonSchema& schema() const { return schema_; }

 private:
  SchemaValidator(JsonSchema schema, SchemaValidatorOptions options)
      : schema_(std::move(schema)), options_(std::move(options)) {}

  JsonSchema schema_;
  SchemaValidatorOptions options_;
};

}  // namespace vmm
