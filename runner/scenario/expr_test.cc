#include "runner/scenario/expr.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

std::string Eval(const std::string& expr, const Scope& scope) {
  ExprValue v;
  std::string error;
  if (!EvaluateExpr(expr, scope, &v, &error)) return "error: " + error;
  return v.is_text ? "text " + v.text : std::to_string(v.number);
}

Scope Vars() {
  Scope s;
  s.Push("page", ExprValue::Number(2 << 20));
  s.Push("pages", ExprValue::Number(512));
  s.Push("buf", ExprValue::Text("A"));
  return s;
}

TEST(Expr, IntegerArithmeticWithSizesAndPrecedence) {
  const Scope s = Vars();
  EXPECT_EQ(Eval("pages * page", s), "1073741824");
  EXPECT_EQ(Eval("1 + 2 * 3", s), "7");
  EXPECT_EQ(Eval("(1 + 2) * 3", s), "9");
  EXPECT_EQ(Eval("7 / 2", s), "3");
  EXPECT_EQ(Eval("-7 % 3", s), "-1");
  EXPECT_EQ(Eval("3 * 2MiB + 4KiB", s), "6295552");
  EXPECT_EQ(Eval("  pages  ", s), "512");
  EXPECT_EQ(Eval("buf", s), "text A");
}

TEST(Expr, ErrorsSayWhatToChange) {
  const Scope s = Vars();
  EXPECT_EQ(Eval("pagess * 2", s), "error: unknown variable 'pagess', did you mean 'pages'?");
  EXPECT_EQ(Eval("x", s), "error: unknown variable 'x'; defined here: 'page', 'pages', 'buf'");
  EXPECT_EQ(Eval("buf + 1", s),
            "error: 'buf' is text ('A'); arithmetic needs integers or sizes such as 2MiB, with "
            "+ - * / % and parentheses");
  EXPECT_EQ(Eval("1 / (pages - 512)", s), "error: division by zero");
  EXPECT_EQ(Eval("2MB", s), "error: '2MB' is not a number or a size, did you mean '2MiB'?");
  EXPECT_EQ(Eval("9223372036854775807 + 1", s),
            "error: integer overflow: the result does not fit in 64 bits");
  EXPECT_EQ(Eval("(1 + 2", s), "error: missing ')' at position 7");
  EXPECT_EQ(Eval("1 +", s),
            "error: the expression ends too early; expected a number, a variable or '('");
  EXPECT_EQ(Eval("", s), "error: the expression is empty; write a number or a variable");
  EXPECT_EQ(Eval("1 2", s), "error: unexpected '2' at position 3");
}

std::string Sub(const std::string& scalar, const Scope& scope) {
  ExprValue v;
  std::string error;
  if (!SubstituteScalar(scalar, scope, &v, &error)) return "error: " + error;
  return (v.is_text ? "text " : "number ") + v.ToString();
}

TEST(Expr, AVariableTooLargeFor64BitsSaysSo) {
  // `--set page=...` gives text when the number does not fit; the message says which it is.
  Scope s;
  s.Push("big", LiteralValue("100000000000000000000000"));
  s.Push("huge", LiteralValue("99999999999999TiB"));
  s.Push("power", LiteralValue("10^30"));
  EXPECT_EQ(Eval("big * 2", s),
            "error: 'big' is '100000000000000000000000', a number past 64 bits (the largest is "
            "9223372036854775807)");
  EXPECT_EQ(Eval("huge / 4", s),
            "error: 'huge' is '99999999999999TiB', a number past 64 bits (the largest is "
            "9223372036854775807)");
  EXPECT_EQ(Eval("power + 1", s),
            "error: 'power' is text ('10^30'); arithmetic needs integers or sizes such as 2MiB, "
            "with + - * / % and parentheses");
}

TEST(Expr, SignsAndParenthesesAreBoundedTogether) {
  Scope s;
  EXPECT_EQ(Eval("- - -3", s), "-3");
  EXPECT_EQ(Eval("+-(-(2))", s), "2");
  EXPECT_EQ(Eval(std::string(64, '-') + "1", s), "1");
  // 200,000 signs once overflowed the stack; now they stop at the bound, as parentheses do.
  EXPECT_EQ(Eval(std::string(200000, '-') + "1", s),
            "error: signs and parentheses are nested deeper than 64 levels (raise it with --limit "
            "expression_depth=N; docs/limits-and-safety.md)");
  EXPECT_EQ(Eval(std::string(40, '-') + std::string(40, '(') + "1" + std::string(40, ')'), s),
            "error: signs and parentheses are nested deeper than 64 levels (raise it with --limit "
            "expression_depth=N; docs/limits-and-safety.md)");
}

TEST(Expr, WholeScalarKeepsTheValueEmbeddedMakesText) {
  Scope s = Vars();
  s.Push("i", ExprValue::Number(37));
  EXPECT_EQ(Sub("${i * page}", s), "number 77594624");
  EXPECT_EQ(Sub("p${i}", s), "text p37");
  EXPECT_EQ(Sub("${buf}${i}", s), "text A37");
  EXPECT_EQ(Sub("cost $5 and $${i}", s), "text cost $5 and ${i}");
  EXPECT_EQ(Sub("p${i", s), "error: in 'p${i': '${' is not closed by '}'");
  EXPECT_EQ(Sub("p${j}", s),
            "error: in 'p${j}': unknown variable 'j'; defined here: 'page', "
            "'pages', 'buf', 'i'");
}

TEST(Expr, LiteralValues) {
  EXPECT_EQ(LiteralValue("2MiB").number, 2 << 20);
  EXPECT_EQ(LiteralValue("-3").number, -3);
  EXPECT_TRUE(LiteralValue("read_write").is_text);
  EXPECT_TRUE(LiteralValue("99999999999999999999").is_text);
}

}  // namespace
}  // namespace vmm
