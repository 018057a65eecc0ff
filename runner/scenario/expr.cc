#include "runner/scenario/expr.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "runner/base/diagnostic.h"
#include "runner/base/format.h"
#include "runner/base/limits.h"
#include "runner/scenario/size.h"

namespace vmm {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Recursive descent over one expression; the first error wins and stops evaluation.
class Parser {
 public:
  Parser(std::string_view text, const Scope& scope) : text_(text), scope_(scope) {}

  bool Run(ExprValue* out, std::string* error) {
    Skip();
    ExprValue v;
    if (at_ == text_.size()) {
      Fail("the expression is empty; write a number or a variable");
    } else {
      v = Expr();
    }
    Skip();
    if (error_.empty() && at_ < text_.size())
      Fail("unexpected '" + std::string(1, text_[at_]) + "' at position " + Pos());
    if (!error_.empty()) {
      *error = error_;
      return false;
    }
    *out = std::move(v);
    return true;
  }

 private:
  // The expression_depth limit (base/limits.h): each level recurses once.
  const uint64_t max_depth_ = LimitValue(Limit::kExpressionDepth);
  std::string DepthMessage() const {
    return "signs and parentheses are nested deeper than " + std::to_string(max_depth_) +
           " levels" + RaiseHint(Limit::kExpressionDepth);
  }

  std::string Pos() const { return std::to_string(at_ + 1); }
  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }
  void Skip() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  bool Peek(char c) {
    Skip();
    return at_ < text_.size() && text_[at_] == c;
  }

  // Arithmetic needs numbers: reports `v` (named `what`) when it is text, and says why when the
  // text is a number too large for 64 bits.
  int64_t Num(const ExprValue& v) {
    if (v.is_text && error_.empty()) {
      // Digits (after a sign) up to an optional unit: a number LiteralValue could not hold.
      const std::string_view t = std::string_view(v.text).substr(v.text.rfind('-', 0) == 0);
      const size_t end = t.find_first_not_of("0123456789");
      const std::string_view unit = end == std::string_view::npos ? "" : t.substr(end);
      const bool digits = end != 0 && !t.empty() &&
                          (unit.empty() || unit == "B" || unit == "KiB" || unit == "MiB" ||
                           unit == "GiB" || unit == "TiB");
      const std::string shown = Excerpt(v.text, 40);
      Fail(last_name_.empty() ? "text cannot be used in arithmetic"
           : digits           ? "'" + last_name_ + "' is '" + shown +
                          "', a number past 64 bits (the largest is 9223372036854775807)"
                    : "'" + last_name_ + "' is text ('" + shown +
                          "'); arithmetic needs integers or sizes such as 2MiB, with + - * / % "
                          "and parentheses");
    }
    return v.number;
  }

  ExprValue Expr() {
    ExprValue left = Term();
    while (error_.empty() && (Peek('+') || Peek('-'))) {
      const char op = text_[at_++];
      const int64_t a = Num(left);
      const int64_t b = Num(Term());
      int64_t r = 0;
      if (error_.empty() &&
          (op == '+' ? __builtin_add_overflow(a, b, &r) : __builtin_sub_overflow(a, b, &r)))
        Fail("integer overflow: the result does not fit in 64 bits");
      left = ExprValue::Number(r);
    }
    return left;
  }

  ExprValue Term() {
    ExprValue left = Unary();
    while (error_.empty() && (Peek('*') || Peek('/') || Peek('%'))) {
      const char op = text_[at_++];
      const int64_t a = Num(left);
      const int64_t b = Num(Unary());
      if (!error_.empty()) break;
      int64_t r = 0;
      if (op == '*') {
        if (__builtin_mul_overflow(a, b, &r))
          Fail("integer overflow: the result does not fit in 64 bits");
      } else if (b == 0) {
        Fail(op == '/' ? "division by zero" : "remainder of a division by zero");
      } else if (a == INT64_MIN && b == -1) {
        Fail("integer overflow: the result does not fit in 64 bits");
      } else {
        r = op == '/' ? a / b : a % b;
      }
      left = ExprValue::Number(r);
    }
    return left;
  }

  // Signs nest like parentheses and share their bound (each one recurses once).
  ExprValue Unary() {
    const bool minus = Peek('-');
    if (!minus && !Peek('+')) return Primary();
    if (++depth_ > max_depth_) {
      Fail(DepthMessage());
      return {};
    }
    ++at_;
    const int64_t v = Num(Unary());
    --depth_;
    if (minus && v == INT64_MIN) Fail("integer overflow: the result does not fit in 64 bits");
    return ExprValue::Number(minus && error_.empty() ? -v : v);
  }

  ExprValue Primary() {
    Skip();
    if (at_ >= text_.size()) {
      Fail("the expression ends too early; expected a number, a variable or '('");
      return {};
    }
    const char c = text_[at_];
    if (c == '(') {
      if (++depth_ > max_depth_) {
        Fail(DepthMessage());
        return {};
      }
      ++at_;
      ExprValue v = Expr();
      if (error_.empty() && !Peek(')')) Fail("missing ')' at position " + Pos());
      if (error_.empty()) ++at_;
      --depth_;
      last_name_.clear();
      return v;
    }
    if (IsDigit(c)) return Literal();
    if (IsNameStart(c)) return Variable();
    Fail("unexpected '" + std::string(1, c) + "' at position " + Pos() +
         "; expected a number, a variable or '('");
    return {};
  }

  // An integer, optionally followed (no space) by a binary unit: 4096, 2MiB.
  ExprValue Literal() {
    const size_t begin = at_;
    while (at_ < text_.size() && IsDigit(text_[at_])) ++at_;
    while (at_ < text_.size() && IsNameChar(text_[at_])) ++at_;
    const std::string_view word = text_.substr(begin, at_ - begin);
    bool overflow = false;
    const std::optional<uint64_t> bytes = ParseSize(word, &overflow);
    last_name_.clear();
    if (bytes && *bytes <= static_cast<uint64_t>(INT64_MAX))
      return ExprValue::Number(static_cast<int64_t>(*bytes));
    if (overflow || bytes) {
      Fail("'" + std::string(word) + "' does not fit in 64 bits");
    } else {
      const std::string fix = SuggestSize(word);
      Fail("'" + std::string(word) + "' is not a number or a size" +
           (fix.empty() ? std::string("; sizes are written like 2MiB")
                        : ", did you mean '" + fix + "'?"));
    }
    return {};
  }

  ExprValue Variable() {
    const size_t begin = at_;
    while (at_ < text_.size() && IsNameChar(text_[at_])) ++at_;
    const std::string_view name = text_.substr(begin, at_ - begin);
    const ExprValue* v = scope_.Find(name);
    if (v == nullptr) {
      const std::vector<std::string> names = scope_.Names();
      const std::string close = SuggestName(std::string(name), names);
      std::string message = "unknown variable '" + std::string(name) + "'";
      if (IsDeviceFact(name)) {
        message = "'" + std::string(name) +
                  "' is a device fact, read from the device when vmm-run runs, validates or "
                  "expands a scenario; it is not known here (a sweep's axes cannot use it)";
      } else if (!close.empty()) {
        message += ", did you mean '" + close + "'?";
      } else if (names.empty()) {
        message += "; no variables are defined here";
      } else {
        message += "; defined here: ";
        for (size_t i = 0; i < names.size(); ++i)
          message += (i == 0 ? "'" : ", '") + names[i] + "'";
      }
      Fail(std::move(message));
      return {};
    }
    last_name_ = std::string(name);
    return *v;
  }

  std::string_view text_;
  const Scope& scope_;
  size_t at_ = 0;
  uint64_t depth_ = 0;
  std::string last_name_;  // the variable just read, to name it when it is text
  std::string error_;
};

}  // namespace

const ExprValue* Scope::Find(std::string_view name) const {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it)
    if (it->first == name) return &it->second;
  return nullptr;
}

std::vector<std::string> Scope::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : vars_) {
    bool seen = false;
    for (const std::string& n : names) seen = seen || n == name;
    if (!seen) names.push_back(name);
  }
  return names;
}

const std::vector<DeviceFactInfo>& DeviceFacts() {
  static const std::vector<DeviceFactInfo> facts = {
      {"device_memory", "the device's total memory, bytes (cuDeviceTotalMem; the twin: its own)"},
      {"device_free", "the device's free memory when the run began, bytes (cuMemGetInfo)"},
  };
  return facts;
}

bool IsDeviceFact(std::string_view name) {
  for (const DeviceFactInfo& f : DeviceFacts())
    if (name == f.name) return true;
  return false;
}

bool MentionsDeviceFacts(std::string_view text) {
  for (const DeviceFactInfo& f : DeviceFacts())
    if (text.find(f.name) != std::string_view::npos) return true;
  return false;
}

bool IsVariableName(std::string_view name) {
  if (name.empty() || !IsNameStart(name[0])) return false;
  for (char c : name)
    if (!IsNameChar(c)) return false;
  return true;
}

bool EvaluateExpr(std::string_view expr, const Scope& scope, ExprValue* out, std::string* error) {
  return Parser(expr, scope).Run(out, error);
}

bool SubstituteScalar(std::string_view scalar, const Scope& scope, ExprValue* out,
                      std::string* error) {
  // The whole scalar is one `${...}`: its value, number or text.
  if (scalar.size() >= 3 && scalar.substr(0, 2) == "${" && scalar.back() == '}' &&
      scalar.find('}') == scalar.size() - 1) {
    if (!EvaluateExpr(scalar.substr(2, scalar.size() - 3), scope, out, error)) {
      *error = "in '" + Excerpt(scalar) + "': " + *error;
      return false;
    }
    return true;
  }
  std::string text;
  size_t at = 0;
  while (at < scalar.size()) {
    const size_t dollar = scalar.find('$', at);
    if (dollar == std::string_view::npos) {
      text.append(scalar.substr(at));
      break;
    }
    text.append(scalar.substr(at, dollar - at));
    if (scalar.substr(dollar, 3) == "$${") {  // escaped: a literal "${"
      text += "${";
      at = dollar + 3;
      continue;
    }
    if (scalar.substr(dollar, 2) != "${") {
      text += '$';
      at = dollar + 1;
      continue;
    }
    const size_t close = scalar.find('}', dollar + 2);
    if (close == std::string_view::npos) {
      *error = "in '" + Excerpt(scalar) + "': '${' is not closed by '}'";
      return false;
    }
    ExprValue v;
    if (!EvaluateExpr(scalar.substr(dollar + 2, close - dollar - 2), scope, &v, error)) {
      *error = "in '" + Excerpt(scalar) + "': " + *error;
      return false;
    }
    text += v.ToString();
    at = close + 1;
  }
  *out = ExprValue::Text(std::move(text));
  return true;
}

ExprValue LiteralValue(const std::string& text) {
  bool overflow = false;
  if (std::optional<uint64_t> bytes = ParseSize(text, &overflow);
      bytes && *bytes <= static_cast<uint64_t>(INT64_MAX))
    return ExprValue::Number(static_cast<int64_t>(*bytes));
  if (text.size() > 1 && text[0] == '-') {
    if (std::optional<uint64_t> n = ParseSize(text.substr(1));
        n && *n <= static_cast<uint64_t>(INT64_MAX) && IsDigit(text.back()))
      return ExprValue::Number(-static_cast<int64_t>(*n));
  }
  return ExprValue::Text(text);
}

}  // namespace vmm
