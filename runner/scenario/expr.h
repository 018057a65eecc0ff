// Variables and `${...}` expressions of the scenario language (docs/scenario-language.md,
// "Variables, loops and includes").
//
// A value is an integer (64-bit, signed) or text. Expressions are integer arithmetic: + - * / %
// (integer division truncates toward zero), unary minus, parentheses, integer literals, size
// literals written without a space (`2MiB`, `256KiB`: bytes) and variable names. Overflow and
// division by zero are errors, never wrapped values. A variable holding text may only stand alone
// (`${buf}`); arithmetic needs numbers.
//
// Pure functions over a Scope the caller owns; nothing here allocates per lookup. Not thread-safe
// only in the sense that a Scope is mutable; distinct scopes may be used concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vmm {

struct ExprValue {
  bool is_text = false;
  int64_t number = 0;  // when !is_text
  std::string text;    // when is_text

  static ExprValue Number(int64_t n) { return ExprValue{false, n, {}}; }
  static ExprValue Text(std::string t) { return ExprValue{true, 0, std::move(t)}; }
  // The value as it is substituted into a scalar: decimal digits, or the text.
  std::string ToString() const { return is_text ? text : std::to_string(number); }
};

// Variables visible at one point: the scenario's vars (or a fragment's params) and the loop
// variables of the enclosing loops, innermost last. Lookup finds the innermost binding.
class Scope {
 public:
  void Push(std::string name, ExprValue value) { vars_.emplace_back(std::move(name), value); }
  void Pop() { vars_.pop_back(); }
  size_t size() const { return vars_.size(); }
  void Truncate(size_t n) { vars_.resize(n); }
  const ExprValue* Find(std::string_view name) const;
  void Set(size_t index, ExprValue value) { vars_[index].second = std::move(value); }
  std::vector<std::string> Names() const;
  const std::vector<std::pair<std::string, ExprValue>>& vars() const { return vars_; }

 private:
  std::vector<std::pair<std::string, ExprValue>> vars_;
};

// True when `name` can name a variable: a letter or '_', then letters, digits or '_'.
bool IsVariableName(std::string_view name);

// The device facts a scenario may use in ${...} like variables, read from the run's device before
// the scenario is expanded (runner/pipeline/device_facts.h): `device_memory`, its total memory,
// and `device_free`, its free memory then, in bytes (on the host twin, its emulated memory).
struct DeviceFactInfo {
  const char* name;
  const char* what;
};
const std::vector<DeviceFactInfo>& DeviceFacts();
bool IsDeviceFact(std::string_view name);
// Whether `text` (a scenario's source) names a device fact anywhere: only then are they read.
bool MentionsDeviceFacts(std::string_view text);

// Evaluates the expression `expr` (the text between `${` and `}`). On failure returns false and
// sets *error to a message without location ("unknown variable 'pag', did you mean 'page'?").
bool EvaluateExpr(std::string_view expr, const Scope& scope, ExprValue* out, std::string* error);

// Substitutes every `${...}` in `scalar`. A scalar that is exactly one `${...}` yields that value
// (a number stays a number); `${...}` embedded in other text yields text. `$${` writes a literal
// `${`. Returns false and sets *error on a bad expression or an unclosed `${`.
bool SubstituteScalar(std::string_view scalar, const Scope& scope, ExprValue* out,
                      std::string* error);

// True when `text` contains `${` (quick test: only such scalars need SubstituteScalar).
inline bool HasTemplate(std::string_view text) { return text.find("${") != std::string_view::npos; }

// A literal value as written in `vars:`, `--set` or a loop list: an integer, a size with a unit
// (`2MiB`, `256 KiB`: bytes), else text. Sizes that overflow 64 bits are text.
ExprValue LiteralValue(const std::string& text);

}  // namespace vmm
