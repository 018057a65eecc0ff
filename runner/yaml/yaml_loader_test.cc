#include "runner/yaml/yaml_loader.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

std::string Errors(const std::string& text, const YamlLoadLimits& limits = {}) {
  std::vector<Diagnostic> d;
  LoadYaml(text, "f.yaml", &d, limits);
  return FormatDiagnostics(d);
}

TEST(LoadYamlTest, BuildsTreeWithPositions) {
  std::vector<Diagnostic> d;
  std::optional<YamlValue> v = LoadYaml("a: 1\nb:\n  - x\n  - {c: 'q'}\nd:\n", "f.yaml", &d);
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(d.empty());
  ASSERT_TRUE(v->IsMap());
  ASSERT_EQ(v->members.size(), 3u);
  EXPECT_EQ(v->members[1].key, "b");
  EXPECT_EQ(v->members[1].line, 2);
  EXPECT_EQ(v->members[1].column, 1);
  const YamlValue* b = v->Find("b");
  ASSERT_TRUE(b != nullptr && b->IsSequence());
  EXPECT_EQ(b->items[0].scalar, "x");
  EXPECT_FALSE(b->items[0].quoted);
  EXPECT_EQ(b->items[0].line, 3);
  EXPECT_EQ(b->items[0].column, 5);
  const YamlValue* c = b->items[1].Find("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->scalar, "q");
  EXPECT_TRUE(c->quoted);
  const YamlValue* empty = v->Find("d");
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->IsNull());
  EXPECT_EQ(empty->line, 5);  // an empty value points at its key
  EXPECT_EQ(v->Find("zz"), nullptr);
}

TEST(LoadYamlTest, SyntaxErrorIsLocated) {
  EXPECT_EQ(Errors("a: [1, 2\nb: 3\n"),
            "f.yaml:2:2: error: invalid YAML: end of sequence flow not found\n");
}

TEST(LoadYamlTest, DuplicateKeysAreReportedAtTheSecond) {
  EXPECT_EQ(Errors("a: 1\nb: {x: 1, x: 2}\na: 3\n"),
            "f.yaml:2:11: error: duplicate key 'x' (first at line 2, column 5)\n"
            "f.yaml:3:1: error: duplicate key 'a' (first at line 1, column 1)\n");
}

TEST(LoadYamlTest, DuplicateKeysInLargeMaps) {
  std::string text;
  for (int i = 0; i < 40; ++i) {
    text += 'k';
    text += std::to_string(i);
    text += ": 1\n";
  }
  text += "k3: 2\nk39: 2\n";
  EXPECT_EQ(Errors(text),
            "f.yaml:41:1: error: duplicate key 'k3' (first at line 4, column 1)\n"
            "f.yaml:42:1: error: duplicate key 'k39' (first at line 40, column 1)\n");
}

TEST(LoadYamlTest, ControlCharactersAreRefusedWhereTheyAre) {
  // An escape sequence written as a YAML escape, a carriage return, a C1 control, a line break in
  // a key; a line break in a value (a block scalar) and a tab are text.
  EXPECT_EQ(Errors("name: \"x\\e[2J\"\nb: \"a\\rb\"\nc: \"\\x9b\"\n\"k\\nk\": 1\n"),
            "f.yaml:1:7: error: the value holds the control character U+001B (ESC) (scenario text "
            "may hold tabs and line breaks but no other control characters: they would reach "
            "terminals and reports); remove it\n"
            "f.yaml:2:4: error: the value holds the control character U+000D (CR) (scenario text "
            "may hold tabs and line breaks but no other control characters: they would reach "
            "terminals and reports); remove it\n"
            "f.yaml:3:4: error: the value holds the control character U+009B (scenario text may "
            "hold tabs and line breaks but no other control characters: they would reach "
            "terminals and reports); remove it\n"
            "f.yaml:4:1: error: the key holds the control character U+000A (LF) (scenario text "
            "may hold tabs but no other control characters: they would reach terminals and "
            "reports); remove it\n");
  EXPECT_EQ(Errors("description: |\n  two\n  lines\nt: \"a\\tb\"\n"), "");
}

TEST(LoadYamlTest, NonScalarKeysAndSeveralDocuments) {
  EXPECT_EQ(Errors("? [a, b]\n: 1\n"),
            "f.yaml:1:3: error: map keys must be plain names, got a list\n");
  EXPECT_EQ(Errors("a: 1\n---\nb: 2\n"),
            "f.yaml:2:1: error: the file holds more than one YAML document; expected one\n");
}

TEST(LoadYamlTest, LimitsStopAliasBombsAndDeepNesting) {
  YamlLoadLimits limits;
  limits.max_values = 100;
  EXPECT_EQ(
      Errors(
          "a: &x [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: &y [*x, *x, *x, *x, *x, *x, *x, *x, *x, *x]\n",
          limits),
      "f.yaml:2:36: error: the document expands to more than 100 values (check anchors and "
      "aliases) (raise it with --limit yaml_values=N; docs/limits-and-safety.md)\n");
  limits = YamlLoadLimits{};
  limits.max_depth = 3;
  EXPECT_EQ(
      Errors("a: [[[[1]]]]\n", limits),
      "f.yaml:1:6: error: maps and lists are nested deeper than 3 levels (raise it with --limit "
      "yaml_depth=N; docs/limits-and-safety.md)\n");
}

TEST(IsBlankYamlTest, CommentsAndWhitespaceOnly) {
  EXPECT_TRUE(IsBlankYaml(""));
  EXPECT_TRUE(IsBlankYaml("  \n# a: 1\n\t\r\n"));
  EXPECT_FALSE(IsBlankYaml("# c\na: 1\n"));
  EXPECT_FALSE(IsBlankYaml("---\n"));
}

TEST(DescribeYamlValueTest, HowValuesReadInMessages) {
  YamlValue v;
  EXPECT_EQ(DescribeYamlValue(v), "nothing");
  v.kind = YamlValue::Kind::kScalar;
  v.scalar = "abc";
  EXPECT_EQ(DescribeYamlValue(v), "'abc'");
  v.scalar = std::string(50, 'x');
  EXPECT_EQ(DescribeYamlValue(v), "'" + std::string(40, 'x') + "...'");
  v.kind = YamlValue::Kind::kMap;
  EXPECT_EQ(DescribeYamlValue(v), "a map");
  v.kind = YamlValue::Kind::kSequence;
  EXPECT_EQ(DescribeYamlValue(v), "a list");
}

}  // namespace
}  // namespace vmm
