// SchemaValidator with small schemas of its own: the machinery is not tied to scenarios.
#include "runner/yaml/schema_validator.h"

#include <gtest/gtest.h>

#include "runner/yaml/yaml_loader.h"

namespace vmm {
namespace {

// A diff-config-like schema exercising every message form.
constexpr char kSchema[] = R"({
  "type": "object",
  "required": ["mode"],
  "additionalProperties": false,
  "properties": {
    "mode": {"enum": ["strict", "lenient"], "description": "How to compare."},
    "threshold": {"allOf": [{"$ref": "#/definitions/percent"}]},
    "ignore": {"type": "array", "maxItems": 2, "items": {"type": "string", "minLength": 1}},
    "rules": {"type": "object", "additionalProperties": {"$ref": "#/definitions/rule"}},
    "checks": {"type": "array", "items": {"$ref": "#/definitions/check"}},
    "pick": {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    "shout": {"enum": ["HI"], "errorMessage": "say HI, not '${0}'"},
    "limit": {"type": "integer", "if": {"minimum": 100}, "then": {"maximum": 100}, "else": {"minimum": 1}}
  },
  "definitions": {
    "percent": {"title": "percentage", "examples": ["5%", "10%"],
                "anyOf": [{"type": "string", "pattern": "^[0-9]+%$"}, {"type": "integer"}]},
    "rule": {"title": "rule", "type": "object", "required": ["field"], "additionalProperties": false,
             "properties": {"field": {"type": "string"}, "weight": {"type": "number", "minimum": 0}}},
    "check": {"title": "check", "type": "object", "required": ["kind"],
              "properties": {"kind": {"enum": ["time", "data"]}},
              "allOf": [
                {"if": {"properties": {"kind": {"const": "time"}}},
                 "then": {"additionalProperties": false, "required": ["kind", "unit"],
                          "properties": {"kind": {}, "unit": {"enum": ["us", "ms"]}}}},
                {"if": {"properties": {"kind": {"const": "data"}}},
                 "then": {"additionalProperties": false, "required": ["kind"],
                          "properties": {"kind": {}, "hash": {"type": "boolean"}}}}]}
  }
})";

std::string Validate(const std::string& text) {
  SchemaValidatorOptions options;
  options.suggest = [](const std::string& title, const std::string& value) {
    return title == "percentage" && value.back() != '%' ? value + "%" : std::string();
  };
  StatusOr<SchemaValidator> v = SchemaValidator::Create(kSchema, options);
  EXPECT_TRUE(v.ok()) << v.status().message();
  if (!v.ok()) return "";
  std::vector<Diagnostic> d;
  std::optional<YamlValue> doc = LoadYaml(text, "c.yaml", &d);
  EXPECT_TRUE(doc.has_value());
  const bool ok = v->Validate(*doc, "c.yaml", &d);
  EXPECT_EQ(ok, d.empty());
  return FormatDiagnostics(d);
}

TEST(SchemaValidatorTest, ValidDocumentHasNoDiagnostics) {
  EXPECT_EQ(
      Validate("mode: strict\nthreshold: 5%\nignore: [a]\nrules: {r: {field: x, weight: 1.5}}\n"
               "checks: [{kind: time, unit: us}, {kind: data, hash: true}]\npick: {a: 1}\n"
               "limit: 100\n"),
      "");
}

TEST(SchemaValidatorTest, TopLevelKeysAndTypes) {
  EXPECT_EQ(Validate("mdoe: strict\nignore: [a, '', c]\n"),
            "c.yaml:1:1: error: unknown key 'mdoe' at the top level, did you mean 'mode'?\n"
            "c.yaml:2:9: error: 'ignore' takes at most 2 items, got 3\n"
            "c.yaml:2:13: error: 'ignore[1]' must not be empty\n");
  EXPECT_EQ(Validate("[1]\n"),
            "c.yaml:1:1: error: the top level must be a map with key 'mode', got a list\n");
}

TEST(SchemaValidatorTest, MissingKeyMisspeltAsUnknownIsReportedOnce) {
  EXPECT_EQ(Validate("mode: strict\nrules: {r: {feild: x}}\n"),
            "c.yaml:2:13: error: unknown key 'feild' in rule 'r', did you mean 'field'?\n");
}

TEST(SchemaValidatorTest, EnumsTitledFormsAndHooks) {
  EXPECT_EQ(Validate("mode: strict\nthreshold: 5\n"), "");  // 5 is an integer: allowed
  EXPECT_EQ(Validate("mode: loose\nthreshold: five\n"),
            "c.yaml:1:7: error: 'mode' must be one of 'strict', 'lenient', got 'loose'\n"
            "c.yaml:2:12: error: 'threshold' must be a percentage such as 5% or 10%, got 'five'; "
            "did you mean 'five%'?\n");
}

TEST(SchemaValidatorTest, DispatchNamesTheObjectAndOtherCases) {
  EXPECT_EQ(Validate("mode: strict\nchecks:\n  - {kind: time, unit: s, hash: true}\n"
                     "  - {kind: tiem}\n  - {unit: us}\n"),
            // 's' is one edit from both 'us' and 'ms': no guess for one-letter words.
            "c.yaml:3:24: error: 'unit' must be one of 'us', 'ms', got 's'\n"
            "c.yaml:3:27: error: key 'hash' is not allowed in check 'time' (only in data)\n"
            "c.yaml:4:12: error: unknown kind 'tiem', did you mean 'time'?\n"
            "c.yaml:5:5: error: check needs key 'kind'\n");
}

TEST(SchemaValidatorTest, OneOfRequiredErrorMessageAndIfThenElse) {
  EXPECT_EQ(Validate("mode: strict\npick: {a: 1, b: 2}\nshout: hello\nlimit: 0\n"),
            "c.yaml:2:7: error: 'pick' takes only one of 'a' or 'b', got both\n"
            "c.yaml:3:8: error: say HI, not 'hello'\n"
            "c.yaml:4:8: error: 'limit' must be at least 1, got '0'\n");
  EXPECT_EQ(Validate("mode: strict\npick: {}\nlimit: 101\n"),
            "c.yaml:2:7: error: 'pick' needs one of 'a' or 'b'\n"
            "c.yaml:3:8: error: 'limit' must be at most 100, got '101'\n");
}

TEST(SchemaValidatorTest, MapKeyQualifiesTitledObjects) {
  EXPECT_EQ(Validate("mode: strict\nrules: {r1: {field: x, weight: -1}, r2: 3}\n"),
            "c.yaml:2:32: error: 'weight' must be at least 0, got '-1'\n"
            "c.yaml:2:41: error: rule 'r2' must be a map with key 'field', got '3'\n");
}

TEST(SuggestNameTest, TyposAndSwaps) {
  EXPECT_EQ(SuggestName("sizee", {"size", "offset"}), "size");
  EXPECT_EQ(SuggestName("nmae", {"name", "steps"}), "name");
  EXPECT_EQ(SuggestName("ofset", {"offset"}), "offset");
  EXPECT_EQ(SuggestName("colour", {"name", "size"}), "");
  EXPECT_EQ(SuggestName("s", {"us", "ms"}), "");  // one letter: every candidate is a guess
  // Bounded: a huge name is not compared (the search is quadratic in its length).
  EXPECT_EQ(SuggestName(std::string(100000, 'x'), {"size", std::string(99999, 'x')}), "");
}

TEST(SortByPositionTest, FileLevelFirstThenLineAndColumnStable) {
  std::vector<Diagnostic> d = {{{"f", 2, 1}, "b"},
                               {{"f", 1, 5}, "a2"},
                               {{"f", 0, 0}, "file"},
                               {{"f", 1, 5}, "a3"},
                               {{"f", 1, 1}, "a1"}};
  SortByPosition(&d);
  std::string order;
  for (const Diagnostic& x : d) order += x.message + " ";
  EXPECT_EQ(order, "file a1 a2 a3 b ");
}

}  // namespace
}  // namespace vmm
