#include "runner/scenario/expander.h"

#include "runner/base/limits.h"
#include "runner/scenario/fragments.h"

namespace vmm {
namespace {

// Top-level keys of the source form that the expanded form does not have.
bool IsSourceOnlyKey(const std::string& key) {
  return key == "vars" || key == "include" || key == "sweep";
}

// One level of expansion: the document itself, one loop iteration, or one fragment use. Labels
// of the enclosing frames, outermost first, make the context of every value made inside.
struct Frame {
  const Frame* parent = nullptr;
  const std::string* file = nullptr;  // where the templates of this frame are written
  std::string label;                  // "for i = 37", "use 'page_cycle' at s.yaml:7:5"; root: ""
  Scope* scope = nullptr;
  const FragmentTable* fragments = nullptr;  // what `use` can name here
  const YamlOrigin* origin = nullptr;        // build pass: made on first use
  bool origin_made = false;
};

std::string ContextOf(const Frame& f) {
  if (f.parent == nullptr) return "";
  std::string outer = ContextOf(*f.parent);
  return outer.empty() ? f.label : outer + ", " + f.label;
}

std::string Describe(const ExprValue& v) { return v.is_text ? "'" + v.text + "'" : v.ToString(); }

class Expander {
 public:
  Expander(const std::string& file, const ExpandOptions& options, Expansion* out,
           std::vector<Diagnostic>* diagnostics, ExpandedStepSink* sink)
      : file_(file),
        options_(options),
        out_(out),
        diagnostics_(diagnostics),
        sink_(sink),
        loader_(options.read_file, options.include_roots, diagnostics) {}

  bool Run(const YamlValue& doc) {
    const size_t errors = diagnostics_->size();
    Scope scope;
    Frame root;
    root.file = &file_;
    root.scope = &scope;
    root.fragments = &fragments_;
    for (const auto& [name, value] : options_.facts) scope.Push(name, value);
    if (const YamlValue* vars = doc.Find("vars")) Vars(*vars, root);
    CheckVarOverrides(doc.Find("vars"), options_.set, file_, diagnostics_);
    if (const YamlValue* include = doc.Find("include")) fragments_ = loader_.Load(*include, file_);
    if (diagnostics_->size() != errors) return false;
    // Count first, build after: a scenario past the limit fails before it takes any memory.
    for (const YamlMember& m : doc.members)  // every `steps:` (a duplicate is refused later)
      if (m.key == "steps" && m.value.IsSequence()) Steps(m.value, root, nullptr);
    if (diagnostics_->size() != errors) return false;
    // The build counts again: it also expands what the count did not see (a second `steps:` key,
    // refused later by the schema, must not expand without a bound first).
    work_ = 0;
    out_->document = Copy(doc, root, /*top=*/true);
    for (const auto& [name, value] : scope.vars()) out_->vars.emplace_back(name, value);
    return diagnostics_->size() == errors;
  }

 private:
  void Error(const Frame& f, int line, int column, std::string message) {
    diagnostics_->push_back(
        Diagnostic{SourceLoc{*f.file, line, column, ContextOf(f)}, std::move(message)});
  }
  void Error(const Frame& f, const YamlValue& at, std::string message) {
    Error(f, at.line, at.column, std::move(message));
  }

  // The value of a scalar written where a value is expected (a var, a loop bound, a parameter).
  bool Value(const YamlValue& v, const Frame& f, ExprValue* out) {
    if (!v.IsScalar()) {
      Error(f, v, "expected a value (a number, a size or text), got " + DescribeYamlValue(v));
      return false;
    }
    if (!HasTemplate(v.scalar)) {
      *out = LiteralValue(v.scalar);
      return true;
    }
    std::string error;
    if (SubstituteScalar(v.scalar, *f.scope, out, &error)) return true;
    Error(f, v, error);
    return false;
  }

  void Vars(const YamlValue& vars, Frame& root) {
    if (!vars.IsMap()) {
      Error(root, vars, "'vars' must be a map of name: value, got " + DescribeYamlValue(vars));
      return;
    }
    for (const YamlMember& m : vars.members) {
      if (!IsVariableName(m.key)) {
        Error(root, m.line, m.column,
              "variable name '" + m.key + "' is not a name; use letters, digits and '_'");
        continue;
      }
      if (IsDeviceFact(m.key)) {
        Error(root, m.line, m.column,
              "'" + m.key +
                  "' is a device fact (read from the device), not a variable to declare; "
                  "choose another name");
        continue;
      }
      ExprValue value;
      const VarOverride* set = nullptr;
      for (const VarOverride& o : options_.set)
        if (o.name == m.key) set = &o;
      if (set != nullptr) {
        value = LiteralValue(set->value);
      } else if (m.value.IsNull()) {
        Error(root, m.line, m.column, "variable '" + m.key + "' needs a value");
        continue;
      } else if (!Value(m.value, root, &value)) {
        continue;
      }
      root.scope->Push(m.key, std::move(value));
    }
  }

  // Expands (out != nullptr) or counts (out == nullptr) the step list `list`.
  void Steps(const YamlValue& list, Frame& f, std::vector<YamlValue>* out) {
    for (const YamlValue& item : list.items) {
      if (exceeded_) return;
      if (item.IsMap() && item.Find("for") != nullptr) {
        For(item, f, out);
      } else if (item.IsMap() && item.Find("use") != nullptr) {
        Use(item, f, out);
      } else if (out != nullptr) {
        Count(1);
        if (!exceeded_) {
          YamlValue copy = Copy(item, f, /*top=*/false);
          if (out == streamed_) {
            sink_->Take(std::move(copy));
          } else {
            out->push_back(std::move(copy));
          }
        }
      } else {
        Count(1);
        if (list_depth_ == 0) ++top_level_steps_;
        ++list_depth_;
        for (const char* list : kStepListKeys)
          if (const YamlValue* body = item.Find(list); body != nullptr && body->IsSequence())
            Steps(*body, f, nullptr);
        if (const YamlValue* branches = item.Find("branches"); branches != nullptr) {
          for (const YamlValue& branch : branches->items) {  // parallel: [{steps: [...]}, ...]
            const YamlValue* body = branch.IsMap() ? branch.Find("steps") : nullptr;
            if (body != nullptr && body->IsSequence()) Steps(*body, f, nullptr);
          }
        }
        --list_depth_;
      }
      if (exceeded_ && f.parent == nullptr && !limit_reported_++)
        Error(f, item,
              "the scenario expands to more than " + std::to_string(max_steps_) +
                  " steps or loop iterations here (the limit); make the loops smaller" +
                  (options_.max_steps == 0 ? RaiseHint(Limit::kExpandedSteps) : ""));
    }
  }

  void Count(size_t n) {
    work_ += n;
    if (work_ > max_steps_) exceeded_ = true;
  }

  // {for: NAME, in: {range: [start, end, step]} | [values], steps: [...]}
  void For(const YamlValue& loop, Frame& f, std::vector<YamlValue>* out) {
    bool ok = true;
    for (const YamlMember& m : loop.members) {
      if (m.key != "for" && m.key != "in" && m.key != "steps") {
        Error(f, m.line, m.column,
              "unknown key '" + m.key + "' in a for loop; expected 'for', 'in' and 'steps'");
        ok = false;
      }
    }
    const YamlValue* body = loop.Find("steps");
    if (body == nullptr) Error(f, loop, "the for loop needs key 'steps'");
    if (body != nullptr && !body->IsSequence()) {
      Error(f, *body, "'steps' of a for loop must be a list, got " + DescribeYamlValue(*body));
      body = nullptr;
    }
    if (!ok || body == nullptr) {
      (void)LoopVariable(loop, f);  // its own errors too
      return;
    }
    LoopOver(loop, f, [&](Frame& child) { Steps(*body, child, out); });
  }

  // The loop variable of {for: NAME, ...}, or nullptr after an error saying why.
  const YamlValue* LoopVariable(const YamlValue& loop, const Frame& f) {
    const YamlValue& var = *loop.Find("for");
    if (!var.IsScalar() || !IsVariableName(var.scalar)) {
      Error(f, var,
            "'for' must name the loop variable (letters, digits, '_'), got " +
                DescribeYamlValue(var));
      return nullptr;
    }
    if (f.scope->Find(var.scalar) != nullptr) {
      Error(f, var,
            "loop variable '" + var.scalar +
                "' is already defined here (a variable, parameter or outer loop); choose another "
                "name");
      return nullptr;
    }
    if (loop.Find("in") == nullptr) {
      Error(f, loop, "the for loop needs key 'in' (a list or {range: [start, end]})");
      return nullptr;
    }
    return &var;
  }

  // Calls `each` once per value of the loop `{for: NAME, in: ...}` (its `for` and `in` keys), in
  // a child frame where NAME has that value; errors in the loop's own keys are reported instead.
  template <typename Each>
  void LoopOver(const YamlValue& loop, Frame& f, Each&& each) {
    const YamlValue* var_node = LoopVariable(loop, f);
    if (var_node == nullptr) return;
    const YamlValue& var = *var_node;
    const YamlValue* in = loop.Find("in");
    std::vector<ExprValue> values;
    int64_t start = 0, end = 0, step = 1;
    const bool is_range = in->IsMap() && in->Find("range") != nullptr;
    if (is_range && !Range(*in, f, &start, &end, &step)) return;
    if (!is_range) {
      if (!in->IsSequence()) {
        Error(f, *in,
              "'in' must be a list of values or {range: [start, end]}, got " +
                  DescribeYamlValue(*in));
        return;
      }
      for (const YamlValue& item : in->items) {
        ExprValue v;
        if (!Value(item, f, &v)) return;
        values.push_back(std::move(v));
      }
    }
    auto iterate = [&](ExprValue value) {
      Frame child;
      child.parent = &f;
      child.file = f.file;
      child.label = "for " + var.scalar + " = " + Describe(value);
      child.scope = f.scope;
      child.fragments = f.fragments;
      f.scope->Push(var.scalar, std::move(value));
      Count(1);
      each(child);
      f.scope->Pop();
    };
    if (is_range) {
      for (int64_t i = start; (step > 0 ? i < end : i > end) && !exceeded_;) {
        iterate(ExprValue::Number(i));
        if (__builtin_add_overflow(i, step, &i)) break;
      }
    } else {
      for (ExprValue& v : values) {
        if (exceeded_) break;
        iterate(std::move(v));
      }
    }
  }

  bool Range(const YamlValue& in, const Frame& f, int64_t* start, int64_t* end, int64_t* step) {
    const YamlValue& range = *in.Find("range");
    if (in.members.size() != 1 || !range.IsSequence() || range.items.size() < 2 ||
        range.items.size() > 3) {
      Error(f, range,
            "'range' must be [start, end] or [start, end, step] (end excluded), got " +
                DescribeYamlValue(range));
      return false;
    }
    int64_t* slots[] = {start, end, step};
    for (size_t i = 0; i < range.items.size(); ++i) {
      ExprValue v;
      if (!Value(range.items[i], f, &v)) return false;
      if (v.is_text) {
        Error(f, range.items[i], "a range bound must be an integer, got '" + v.text + "'");
        return false;
      }
      *slots[i] = v.number;
    }
    if (*step == 0) {
      Error(f, range.items[2], "the step of a range cannot be 0");
      return false;
    }
    return true;
  }

  // {use: NAME, with: {param: value}}
  void Use(const YamlValue& use, Frame& f, std::vector<YamlValue>* out) {
    bool ok = true;
    for (const YamlMember& m : use.members) {
      if (m.key != "use" && m.key != "with") {
        Error(f, m.line, m.column,
              "unknown key '" + m.key + "' in a use step; expected 'use' and 'with'");
        ok = false;
      }
    }
    const YamlValue& name = *use.Find("use");
    const Fragment* fragment = name.IsScalar() ? FindFragment(*f.fragments, name.scalar) : nullptr;
    if (fragment == nullptr) return Error(f, name, UnknownFragmentMessage(*f.fragments, name));
    const YamlValue* with = use.Find("with");
    if (with != nullptr && !with->IsMap() && !with->IsNull()) {
      Error(f, *with, "'with' must be a map of parameter: value, got " + DescribeYamlValue(*with));
      return;
    }
    if (with != nullptr) {
      for (auto& [member, message] : UnknownParameters(*fragment, *with)) {
        Error(f, member->line, member->column, std::move(message));
        ok = false;
      }
    }
    Scope scope;
    Frame child;
    child.parent = &f;
    child.file = &fragment->file;
    child.label = "use '" + fragment->name + "' at " + *f.file + ":" + std::to_string(use.line) +
                  ":" + std::to_string(use.column);
    child.scope = &scope;
    child.fragments = &fragment->includes;
    for (const FragmentParam& p : fragment->params) {
      const YamlValue* given = with != nullptr ? with->Find(p.name) : nullptr;
      ExprValue value;
      if (given != nullptr) {
        if (!Value(*given, f, &value)) ok = false;
      } else if (p.default_value != nullptr) {
        if (!Value(*p.default_value, child, &value)) ok = false;
      } else {
        Error(f, use,
              "fragment '" + fragment->name + "' needs parameter '" + p.name + "' (declared at " +
                  fragment->file + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) +
                  ")");
        ok = false;
      }
      scope.Push(p.name, std::move(value));
    }
    if (!ok || fragment->steps == nullptr) return;
    Steps(*fragment->steps, child, out);
  }

  const YamlOrigin* OriginOf(Frame& f) {
    if (!f.origin_made) {
      f.origin_made = true;
      std::string context = ContextOf(f);
      if (!context.empty() || f.file != &file_)
        f.origin = &out_->origins->emplace_back(YamlOrigin{
            std::make_shared<const SourceOrigin>(SourceOrigin{*f.file, std::move(context)})});
    }
    return f.origin;
  }

  // A copy of `v` with every `${...}` substituted; step lists inside it are expanded.
  YamlValue Copy(const YamlValue& v, Frame& f, bool top) {
    YamlValue c;
    c.kind = v.kind;
    c.line = v.line;
    c.column = v.column;
    c.quoted = v.quoted;
    c.origin = OriginOf(f);
    switch (v.kind) {
      case YamlValue::Kind::kNull:
        break;
      case YamlValue::Kind::kScalar:
        c.scalar = Substitute(v, v.scalar, f, &c.quoted);
        break;
      case YamlValue::Kind::kSequence:
        c.items.reserve(v.items.size());
        for (const YamlValue& item : v.items) c.items.push_back(Copy(item, f, false));
        break;
      case YamlValue::Kind::kMap:
        c.members.reserve(v.members.size());
        for (const YamlMember& m : v.members) {
          if (top && IsSourceOnlyKey(m.key)) continue;
          YamlMember& cm = c.members.emplace_back();
          cm.line = m.line;
          cm.column = m.column;
          bool ignored = false;
          cm.key = HasTemplate(m.key) ? Substitute(v, m.key, f, &ignored) : m.key;
          if (top && (m.key == "views" || m.key == "buffers") && m.value.IsMap()) {
            cm.value = Declarations(m.value, f);
          } else if (IsStepListKey(m.key) && m.value.IsSequence()) {
            cm.value.kind = YamlValue::Kind::kSequence;
            cm.value.line = m.value.line;
            cm.value.column = m.value.column;
            cm.value.origin = c.origin;
            // The top-level list's size is known from the count (a loop of 80,000 steps: one
            // allocation, not a doubling vector's 131,072 slots). The first one may stream.
            if (top && sink_ != nullptr && streamed_ == nullptr && m.key == "steps") {
              streamed_ = &cm.value.items;
              sink_->Expect(top_level_steps_);
            } else if (top) {
              cm.value.items.reserve(top_level_steps_);
            }
            Steps(m.value, f, &cm.value.items);
          } else {
            cm.value = Copy(m.value, f, false);
          }
        }
        break;
    }
    return c;
  }

  // `buffers:` or `views:`: a copy where each entry whose value holds `for` and `in` becomes one
  // entry per loop value (`"K${i}": {for: i, in: {range: [0, 4]}, of: KV, offset: "${i * 2MiB}",
  // shape: [...]}`), its name and fields substituted there; the name must use the variable.
  YamlValue Declarations(const YamlValue& map, Frame& f) {
    YamlValue c;
    c.kind = YamlValue::Kind::kMap;
    c.line = map.line;
    c.column = map.column;
    c.origin = OriginOf(f);
    for (const YamlMember& m : map.members) {
      const YamlValue* var = m.value.IsMap() ? m.value.Find("for") : nullptr;
      if (var == nullptr) {
        CopyMember(map, m, m.value, f, &c);
      } else if (!HasTemplate(m.key)) {
        Error(f, m.line, m.column,
              "'" + m.key + "' is declared in a loop but its name does not use the loop " +
                  "variable (every iteration would declare the same name); write it as \"" + m.key +
                  "${" + (var->IsScalar() ? var->scalar : "i") + "}\"");
      } else {
        YamlValue fields = m.value;  // the declaration without its loop keys
        std::erase_if(fields.members,
                      [](const YamlMember& k) { return k.key == "for" || k.key == "in"; });
        LoopOver(m.value, f, [&](Frame& child) { CopyMember(map, m, fields, child, &c); });
      }
    }
    return c;
  }

  // Member `m` of `map` copied into `out` in frame `f`: its key substituted (keys may hold
  // ${...}), `value` (m's value, or a version of it) copied.
  void CopyMember(const YamlValue& map, const YamlMember& m, const YamlValue& value, Frame& f,
                  YamlValue* out) {
    YamlMember& cm = out->members.emplace_back();
    cm.line = m.line;
    cm.column = m.column;
    bool ignored = false;
    cm.key = HasTemplate(m.key) ? Substitute(map, m.key, f, &ignored) : m.key;
    cm.value = Copy(value, f, false);
  }

  std::string Substitute(const YamlValue& at, const std::string& text, const Frame& f,
                         bool* quoted) {
    if (!HasTemplate(text)) return text;
    ExprValue v;
    std::string error;
    if (!SubstituteScalar(text, *f.scope, &v, &error)) {
      Error(f, at, error);
      return text;
    }
    *quoted = v.is_text;
    return v.ToString();
  }

  const std::string& file_;
  const ExpandOptions& options_;
  const size_t max_steps_ =
      options_.max_steps != 0 ? options_.max_steps : LimitValue(Limit::kExpandedSteps);
  Expansion* out_;
  std::vector<Diagnostic>* diagnostics_;
  ExpandedStepSink* sink_;                            // null: every step list stays in the document
  const std::vector<YamlValue>* streamed_ = nullptr;  // the list whose steps go to sink_ instead
  FragmentLoader loader_;
  FragmentTable fragments_;
  size_t work_ = 0;
  bool exceeded_ = false;
  // The count's own: how deep in step lists it is (0: the top-level `steps`, loops included) and
  // how many steps that top-level list expands to.
  int list_depth_ = 0;
  size_t top_level_steps_ = 0;
  int limit_reported_ = 0;
};

}  // namespace

std::optional<Expansion> ExpandScenario(const YamlValue& document, const std::string& file,
                                        const ExpandOptions& options,
                                        std::vector<Diagnostic>* diagnostics,
                                        ExpandedStepSink* sink) {
  Expansion expansion;
  if (!document.IsMap()) {
    expansion.document = document;
    return expansion;
  }
  if (!Expander(file, options, &expansion, diagnostics, sink).Run(document)) return std::nullopt;
  return expansion;
}

}  // namespace vmm
