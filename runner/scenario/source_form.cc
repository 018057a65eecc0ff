// The source form's entry points besides ExpandScenario (declared in expander.h): --set
// parsing, the quick NeedsExpansion test, and the points of a sweep.
#include <algorithm>
#include <cctype>

#include "runner/scenario/expander.h"

namespace vmm {
namespace {

void Error(std::vector<Diagnostic>* d, const std::string& file, const YamlValue& at,
           std::string message) {
  d->push_back(Diagnostic{LocationOf(file, at), std::move(message)});
}

// The values of one axis as written; false after reporting.
bool AxisValues(const YamlValue& axis, const std::string& file, std::vector<std::string>* out,
                std::vector<Diagnostic>* d) {
  if (axis.IsSequence()) {
    for (const YamlValue& v : axis.items) {
      if (!v.IsScalar() || HasTemplate(v.scalar)) {
        Error(d, file, v,
              "a sweep value must be a number, a size or text, got " + DescribeYamlValue(v));
        return false;
      }
      out->push_back(v.scalar);
    }
  } else if (const YamlValue* range = axis.IsMap() ? axis.Find("range") : nullptr;
             range != nullptr && axis.members.size() == 1 && range->IsSequence() &&
             (range->items.size() == 2 || range->items.size() == 3)) {
    int64_t bound[3] = {0, 0, 1};
    for (size_t i = 0; i < range->items.size(); ++i) {
      const YamlValue& b = range->items[i];
      const ExprValue v = b.IsScalar() ? LiteralValue(b.scalar) : ExprValue::Text("");
      if (v.is_text) {
        Error(d, file, b, "a range bound must be an integer, got " + DescribeYamlValue(b));
        return false;
      }
      bound[i] = v.number;
    }
    if (bound[2] == 0) {
      Error(d, file, range->items[2], "the step of a range cannot be 0");
      return false;
    }
    for (int64_t i = bound[0]; bound[2] > 0 ? i < bound[1] : i > bound[1];) {
      if (out->size() >= kMaxSweepPoints) break;
      out->push_back(std::to_string(i));
      if (__builtin_add_overflow(i, bound[2], &i)) break;
    }
  } else {
    Error(d, file, axis,
          "a sweep axis must be a list of values or {range: [start, end]}, got " +
              DescribeYamlValue(axis));
    return false;
  }
  if (out->empty()) {
    Error(d, file, axis, "the sweep axis has no values");
    return false;
  }
  return true;
}

bool HasLoopOrUse(const YamlValue& steps) {
  for (const YamlValue& item : steps.items) {
    if (!item.IsMap()) continue;
    if (item.Find("for") != nullptr || item.Find("use") != nullptr) return true;
    for (const char* list : kStepListKeys)
      if (const YamlValue* body = item.Find(list); body != nullptr && HasLoopOrUse(*body))
        return true;
    if (const YamlValue* branches = item.Find("branches"); branches != nullptr) {
      for (const YamlValue& branch : branches->items) {  // parallel: [{steps: [...]}, ...]
        const YamlValue* body = branch.IsMap() ? branch.Find("steps") : nullptr;
        if (body != nullptr && HasLoopOrUse(*body)) return true;
      }
    }
  }
  return false;
}

}  // namespace

void CheckVarOverrides(const YamlValue* vars, const std::vector<VarOverride>& set,
                       const std::string& file, std::vector<Diagnostic>* out) {
  std::vector<std::string> names;
  if (vars != nullptr)
    for (const YamlMember& m : vars->members) names.push_back(m.key);
  for (const VarOverride& o : set) {
    if (std::find(names.begin(), names.end(), o.name) != names.end()) continue;
    std::string message = "--set " + o.name + ": the scenario has no variable '" + o.name + "'";
    const std::string close = SuggestName(o.name, names);
    if (!close.empty()) {
      message += ", did you mean '" + close + "'?";
    } else if (names.empty()) {
      message += "; it declares none under 'vars:'";
    } else {
      message += "; it declares";
      for (size_t i = 0; i < names.size(); ++i) message += (i == 0 ? " '" : ", '") + names[i] + "'";
    }
    out->push_back(Diagnostic{SourceLoc{file, 0, 0}, std::move(message)});
  }
}

bool ParseVarOverride(const std::string& arg, VarOverride* out, std::string* error) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || !IsVariableName(arg.substr(0, eq))) {
    *error = "--set expects NAME=VALUE (a variable of the scenario's 'vars:'), got '" + arg + "'";
    return false;
  }
  *out = VarOverride{arg.substr(0, eq), arg.substr(eq + 1)};
  return true;
}

bool NeedsExpansion(const std::string& text, const YamlValue& document,
                    const ExpandOptions& options) {
  if (!options.set.empty()) return true;
  if (!document.IsMap()) return false;
  if (HasTemplate(text) || document.Find("vars") != nullptr || document.Find("include") != nullptr)
    return true;
  const YamlValue* steps = document.Find("steps");
  return steps != nullptr && HasLoopOrUse(*steps);
}

std::optional<std::vector<SweepPoint>> SweepPoints(const YamlValue& document,
                                                   const std::string& file,
                                                   const std::vector<VarOverride>& set,
                                                   std::vector<Diagnostic>* diagnostics) {
  std::vector<SweepPoint> points;
  const YamlValue* sweep = document.IsMap() ? document.Find("sweep") : nullptr;
  if (sweep == nullptr) return points;
  if (!sweep->IsMap() || sweep->members.empty()) {
    Error(diagnostics, file, *sweep,
          "'sweep' must be a map of variable: values, got " + DescribeYamlValue(*sweep));
    return std::nullopt;
  }
  const YamlValue* vars = document.Find("vars");
  bool ok = true;
  points.emplace_back();
  for (const YamlMember& m : sweep->members) {
    if (vars == nullptr || !vars->IsMap() || vars->Find(m.key) == nullptr) {
      diagnostics->push_back(
          Diagnostic{SourceLoc{file, m.line, m.column},
                     "sweep axis '" + m.key +
                         "' is not a variable; declare it under 'vars:' (its value "
                         "there is used by `vmm-run validate` and `expand`)"});
      ok = false;
      continue;
    }
    std::vector<std::string> values;
    if (!AxisValues(m.value, file, &values, diagnostics)) {
      ok = false;
      continue;
    }
    bool fixed = false;
    for (const VarOverride& o : set) fixed = fixed || o.name == m.key;
    if (fixed) continue;
    if (points.size() * values.size() > kMaxSweepPoints) {
      diagnostics->push_back(Diagnostic{SourceLoc{file, m.line, m.column},
                                        "the sweep has more than " +
                                            std::to_string(kMaxSweepPoints) +
                                            " points (the limit); use fewer values"});
      return std::nullopt;
    }
    std::vector<SweepPoint> next;
    next.reserve(points.size() * values.size());
    for (const SweepPoint& p : points) {
      for (const std::string& v : values) {
        SweepPoint q = p;
        q.push_back(VarOverride{m.key, v});
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  if (!ok) return std::nullopt;
  if (points.size() == 1 && points.front().empty()) points.clear();  // every axis fixed by --set
  return points;
}

std::string SweepPointText(const SweepPoint& point) {
  std::string out;
  for (const VarOverride& v : point) {
    if (!out.empty()) out += ',';
    out += v.name + "=" + v.value;
  }
  for (char& c : out) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                      c == '=' || c == ',' || c == '+' || c == '-';
    if (!safe) c = '_';
  }
  return out;
}

}  // namespace vmm
