// The `vmm-run steps` reference, generated from the compiled scenario schema so that the help text,
// the docs and the validator can never disagree.
#pragma once

#include <string>

#include "runner/yaml/json_schema.h"

namespace vmm {

// Every op of the schema's step dispatch, in schema order, each with its fields.
std::string DescribeStepsFromSchema(const JsonSchema& schema);
// One op; for an unknown op returns "" and sets *error (with a did-you-mean when one is close).
std::string DescribeStepFromSchema(const JsonSchema& schema, const std::string& op,
                                   std::string* error);
// A short type for a field: "size", "string", "integer 1..1000000", "read_write | read | none".
std::string SchemaTypeSummary(const SchemaNode* node);

}  // namespace vmm
