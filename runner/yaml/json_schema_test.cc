#include "runner/yaml/json_schema.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

std::string CompileError(const std::string& schema) {
  StatusOr<JsonSchema> s = JsonSchema::Compile(schema);
  return s.ok() ? "ok" : s.status().message();
}

TEST(JsonSchemaTest, CompilesRefsAndDispatch) {
  StatusOr<JsonSchema> s = JsonSchema::Compile(R"({
    "type": "object",
    "properties": {"x": {"$ref": "#/definitions/x"}},
    "allOf": [
      {"if": {"required": ["k"], "properties": {"k": {"const": "a"}}}, "then": {"required": ["a"]}},
      {"if": {"properties": {"k": {"const": "b"}}}, "then": {"required": ["b"]}},
      {"required": ["k"]}
    ],
    "definitions": {"x": {"title": "ex", "type": "integer", "minimum": 1, "default": 3}}
  })");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const SchemaNode& root = s->root();
  EXPECT_EQ(root.types, static_cast<uint32_t>(kJsonObject));
  EXPECT_EQ(root.discriminator, "k");
  ASSERT_EQ(root.cases.size(), 2u);
  EXPECT_EQ(root.Case("b")->required, std::vector<std::string>{"b"});
  EXPECT_EQ(root.Case("c"), nullptr);
  ASSERT_EQ(root.all_of.size(), 1u);  // the plain member stays an allOf
  const SchemaNode* x = root.Property("x")->Resolved();
  EXPECT_EQ(x->title, "ex");
  EXPECT_EQ(x->pointer, "#/definitions/x");
  EXPECT_EQ(*x->minimum, 1.0);
  EXPECT_EQ(x->default_value->scalar, "3");
  EXPECT_EQ(s->Find("#/definitions/x"), x);
  EXPECT_EQ(s->Find("#/nope"), nullptr);
}

TEST(JsonSchemaTest, RefusesWhatItCannotCheck) {
  EXPECT_EQ(CompileError(R"({"uniqueItems": true})"),
            "schema #/uniqueItems: keyword 'uniqueItems' is not supported");
  EXPECT_EQ(CompileError(R"({"$ref": "#/definitions/none"})"),
            "schema #/$ref: cannot resolve '#/definitions/none' (only local pointers \"#/...\" are "
            "supported)");
  EXPECT_EQ(
      CompileError(R"({"pattern": "("})").rfind("schema #/pattern: bad regular expression", 0), 0u);
  EXPECT_EQ(CompileError(R"({"type": "strin"})"), "schema #/type: unknown type 'strin'");
  EXPECT_EQ(CompileError(R"({"properties": {"a": {"$ref": "#", "type": "string"}}})"),
            "schema #/properties/a: '$ref' must not have assertion siblings (draft-07 ignores "
            "them); wrap it in allOf");
  EXPECT_EQ(CompileError(R"({"then": {}})"), "schema #: 'then'/'else' without 'if'");
  EXPECT_EQ(CompileError("{\"a\": [}").rfind("schema is not valid JSON: schema:1:", 0), 0u);
}

TEST(JsonSchemaTest, YamlScalarsAreWeaklyTyped) {
  auto scalar = [](const char* text) {
    YamlValue v;
    v.kind = YamlValue::Kind::kScalar;
    v.scalar = text;
    return v;
  };
  EXPECT_EQ(YamlTypes(scalar("12")), kJsonString | kJsonInteger | kJsonNumber);
  EXPECT_EQ(YamlTypes(scalar("-1.5")), kJsonString | kJsonNumber);
  EXPECT_EQ(YamlTypes(scalar("true")), kJsonString | kJsonBoolean);
  EXPECT_EQ(YamlTypes(scalar("yes")), static_cast<uint32_t>(kJsonString));
  EXPECT_EQ(YamlTypes(scalar("99999999999999999999")), kJsonString | kJsonNumber);
  EXPECT_EQ(YamlTypes(YamlValue{}), static_cast<uint32_t>(kJsonNull));
  EXPECT_EQ(JsonTypePhrase(kJsonInteger), "an integer");
  EXPECT_EQ(JsonTypePhrase(kJsonString | kJsonNull), "a string or empty");
  EXPECT_EQ(JsonTypePhrase(kJsonInteger | kJsonNumber), "a number");
}

}  // namespace
}  // namespace vmm
