#include "runner/yaml/schema_validator.h"

#include <algorithm>
#include <string_view>

#include "runner/yaml/schema_text.h"

namespace vmm {
namespace {

struct Issue {
  int line = 0;
  int column = 0;
  const YamlOrigin* origin = nullptr;
  std::string message;
};
using Issues = std::vector<Issue>;

// Where a value sits, for messages. Cheap to build: names are only formatted when reported.
struct Ctx {
  const Ctx* parent = nullptr;
  std::string_view key;                    // member key, or empty for a list item / the root
  int index = -1;                          // list index when key is empty
  std::string_view title;                  // object title inherited through dispatch
  std::string_view qualifier;              // dispatch value or map key naming the object
  const SchemaNode* dispatcher = nullptr;  // schema whose cases selected the current one
  bool root = false;
  bool discriminator = false;  // this value is a dispatch key (e.g. a step's `op`)

  std::string Name() const {
    if (!key.empty()) return std::string(key);
    if (index >= 0 && parent != nullptr) return parent->Name() + "[" + std::to_string(index) + "]";
    return "";
  }
  std::string Quoted() const { return root ? std::string("the top level") : Quote(Name()); }
};

Ctx Member(const Ctx& parent, std::string_view key) {
  Ctx c;
  c.parent = &parent;
  c.key = key;
  return c;
}

bool IsRequiredOnly(const SchemaNode* n) {
  n = n->Resolved();
  return !n->required.empty() && n->types == 0 && n->properties.empty() && !n->has_enum &&
         n->const_value == nullptr && n->all_of.empty() && n->any_of.empty() && n->one_of.empty() &&
         n->cases.empty();
}

class Checker {
 public:
  explicit Checker(const SchemaValidatorOptions& options) : options_(options) {}

  // Returns whether `v` satisfies `s`. With out == nullptr it only decides (used by if/anyOf/oneOf)
  // and stops at the first failure.
  bool Evaluate(const YamlValue& v, const SchemaNode* s, const Ctx& ctx, Issues* out) const {
    const SchemaNode* n = s->Resolved();
    if (n->error_message.empty() || out == nullptr) return EvaluateNode(v, n, ctx, out);
    Issues ignored;
    if (EvaluateNode(v, n, ctx, &ignored)) return true;
    std::string message = n->error_message;
    const std::string value = v.IsScalar() ? v.scalar : DescribeYamlValue(v);
    for (size_t at; (at = message.find("${0}")) != std::string::npos;)
      message.replace(at, 4, value);
    Report(out, v, std::move(message));
    return false;
  }

 private:
  static void Report(Issues* out, int line, int column, const YamlOrigin* origin,
                     std::string message) {
    if (out != nullptr) out->push_back(Issue{line, column, origin, std::move(message)});
  }
  static void Report(Issues* out, const YamlValue& v, std::string message) {
    Report(out, v.line, v.column, v.origin, std::move(message));
  }

  bool EvaluateNode(const YamlValue& v, const SchemaNode* n, const Ctx& ctx, Issues* out) const {
    if (n->types != 0 && (YamlTypes(v) & n->types) == 0) {
      std::string expected = JsonTypePhrase(n->types);
      if (n->types == kJsonObject && !n->required.empty())
        expected +=
            (n->required.size() == 1 ? " with key " : " with keys ") + QuotedList(n->required);
      Report(out, v,
             (n->title.empty() ? ctx.Quoted() : Subject(n, ctx)) + " must be " + expected +
                 ", got " + DescribeYamlValue(v));
      return false;
    }
    bool ok = true;
    if (n->const_value != nullptr && !(v.IsScalar() && v.scalar == n->const_value->scalar)) {
      ok = false;
      Report(out, v,
             ctx.Quoted() + " must be " + n->const_value->scalar + ", got " + DescribeYamlValue(v));
    }
    if (n->has_enum && !(v.IsScalar() && std::find(n->enum_values.begin(), n->enum_values.end(),
                                                   v.scalar) != n->enum_values.end())) {
      ok = false;
      if (out != nullptr) Report(out, v, EnumMessage(v, n, ctx));
    }
    if (!ok && out == nullptr) return false;
    if (v.IsScalar()) ok = CheckScalar(v, n, ctx, out) && ok;
    if (!ok && out == nullptr) return false;
    if (v.IsMap()) ok = CheckObject(v, n, ctx, out) && ok;
    if (v.IsSequence()) ok = CheckArray(v, n, ctx, out) && ok;
    if (!ok && out == nullptr) return false;
    for (const SchemaNode* sub : n->all_of) {
      ok = Evaluate(v, sub, ctx, out) && ok;
      if (!ok && out == nullptr) return false;
    }
    if (!n->any_of.empty()) ok = CheckAnyOf(v, n, ctx, out) && ok;
    if (!n->one_of.empty()) ok = CheckOneOf(v, n, ctx, out) && ok;
    if (!ok && out == nullptr) return false;
    if (n->if_schema != nullptr) {
      const SchemaNode* branch =
          Evaluate(v, n->if_schema, ctx, nullptr) ? n->then_schema : n->else_schema;
      if (branch != nullptr) ok = Evaluate(v, branch, ctx, out) && ok;
    }
    if (!n->cases.empty() && v.IsMap()) ok = Dispatch(v, n, ctx, out) && ok;
    return ok;
  }

  std::string EnumMessage(const YamlValue& v, const SchemaNode* n, const Ctx& ctx) const {
    const std::string suggestion =
        v.IsScalar() ? SuggestName(v.scalar, n->enum_values) : std::string();
    if (ctx.discriminator) {
      std::string m = "unknown " + ctx.Name() + " " + DescribeYamlValue(v);
      if (!suggestion.empty()) return m + ", did you mean " + Quote(suggestion) + "?";
      return m + "; expected one of: " + Join(n->enum_values);
    }
    std::string m = ctx.Quoted() + " must be " + (n->enum_values.size() == 1 ? "" : "one of ") +
                    QuotedList(n->enum_values, ", ") + ", got " + DescribeYamlValue(v);
    if (!suggestion.empty()) m += "; did you mean " + Quote(suggestion) + "?";
    return m;
  }

  bool CheckScalar(const YamlValue& v, const SchemaNode* n, const Ctx& ctx, Issues* out) const {
    bool ok = true;
    if (n->min_length || n->max_length) {
      const size_t len = Utf8Length(v.scalar);
      if (n->min_length && len < *n->min_length) {
        ok = false;
        Report(out, v,
               ctx.Quoted() + (*n->min_length == 1
                                   ? std::string(" must not be empty")
                                   : " must be at least " + std::to_string(*n->min_length) +
                                         " characters long, got " + DescribeYamlValue(v)));
      }
      if (n->max_length && len > *n->max_length) {
        ok = false;
        Report(out, v,
               ctx.Quoted() + " must be at most " + std::to_string(*n->max_length) +
                   " characters long, got " + DescribeYamlValue(v));
      }
    }
    if (n->pattern && !std::regex_search(v.scalar, *n->pattern)) {
      ok = false;
      Report(out, v,
             ctx.Quoted() + " must match /" + n->pattern_source + "/, got " + DescribeYamlValue(v));
    }
    double d = 0;
    if ((n->minimum || n->maximum) && YamlIsNumber(v, &d)) {
      if (n->minimum && d < *n->minimum) {
        ok = false;
        Report(out, v,
               ctx.Quoted() + " must be at least " + FormatNumber(*n->minimum) + ", got " +
                   DescribeYamlValue(v));
      }
      if (n->maximum && d > *n->maximum) {
        ok = false;
        Report(out, v,
               ctx.Quoted() + " must be at most " + FormatNumber(*n->maximum) + ", got " +
                   DescribeYamlValue(v));
      }
    }
    return ok;
  }

  static std::string Items(uint64_t n) { return std::to_string(n) + (n == 1 ? " item" : " items"); }

  bool CheckArray(const YamlValue& v, const SchemaNode* n, const Ctx& ctx, Issues* out) const {
    bool ok = true;
    const uint64_t size = v.items.size();
    const bool too_few = n->min_items && size < *n->min_items;
    const bool too_many = n->max_items && size > *n->max_items;
    if (too_few || too_many) {
      ok = false;
      std::string need;
      if (n->min_items && n->max_items && *n->min_items == *n->max_items) {
        need = " needs exactly " + Items(*n->min_items);
      } else if (too_few) {
        need =
            *n->min_items == 1 ? " must not be empty" : " needs at least " + Items(*n->min_items);
      } else {
        need = " takes at most " + Items(*n->max_items);
      }
      Report(out, v,
             ctx.Quoted() + need +
                 (need == " must not be empty" ? "" : ", got " + std::to_string(size)));
    }
    if (n->items != nullptr) {
      for (size_t i = 0; i < v.items.size(); ++i) {
        Ctx c;
        c.parent = &ctx;
        c.index = static_cast<int>(i);
        ok = Evaluate(v.items[i], n->items, c, out) && ok;
        if (!ok && out == nullptr) return false;
      }
    }
    return ok;
  }

  // "step 'reserve'", "buffer 'A'", "the top level", or the quoted value name.
  static std::string Subject(const SchemaNode* n, const Ctx& ctx) {
    if (ctx.root) return "the top level";
    std::string_view title = !n->title.empty() ? std::string_view(n->title) : ctx.title;
    if (title.empty()) return ctx.Quoted();
    if (ctx.qualifier.empty()) return std::string(title);
    return std::string(title) + " " + Quote(ctx.qualifier);
  }

  bool CheckObject(const YamlValue& v, const SchemaNode* n, const Ctx& ctx, Issues* out) const {
    bool ok = true;
    std::vector<std::string> suggested;  // keys an unknown key probably meant
    for (size_t i = 0; i < v.members.size(); ++i) {
      const YamlMember& m = v.members[i];
      if (const SchemaNode* p = n->Property(m.key)) {
        Ctx c = Member(ctx, m.key);
        c.discriminator = !n->cases.empty() && m.key == n->discriminator;
        ok = Evaluate(m.value, p, c, out) && ok;
      } else if (n->additional != nullptr) {
        Ctx c = Member(ctx, m.key);
        c.qualifier = m.key;
        ok = Evaluate(m.value, n->additional, c, out) && ok;
      } else if (!n->additional_allowed) {
        ok = false;
        if (out == nullptr) {
        } else if (i > 0 && IsCommaSplit(v.members[i - 1], m)) {
          Report(out, m.line, m.column, v.origin, CommaSplitKey(v.members[i - 1], m, n, ctx));
        } else {
          Report(out, m.line, m.column, v.origin, UnknownKey(m.key, n, ctx, &suggested));
        }
      }
      if (!ok && out == nullptr) return false;
    }
    for (const std::string& key : n->required) {
      if (v.Find(key) != nullptr) continue;
      ok = false;
      if (out == nullptr) return false;
      if (std::find(suggested.begin(), suggested.end(), key) != suggested.end()) continue;
      Report(out, v,
             ctx.root ? "missing key " + Quote(key) + " at the top level"
                      : Subject(n, ctx) + " needs key " + Quote(key));
    }
    return ok;
  }

  // `{op: fill, name: a, b}`: in a flow map a comma ends a plain value, so "a, b" became the
  // value "a" and a key "b" with no value, on the same line. (Block maps cannot do this.)
  static bool IsCommaSplit(const YamlMember& previous, const YamlMember& m) {
    return m.value.IsNull() && previous.value.IsScalar() && !previous.value.quoted &&
           previous.value.line == m.line && m.column > previous.value.column;
  }

  std::string CommaSplitKey(const YamlMember& previous, const YamlMember& m, const SchemaNode* n,
                            const Ctx& ctx) const {
    const std::string where = ctx.root ? "at the top level" : "in " + Subject(n, ctx);
    const std::string joined = previous.value.scalar + ", " + m.key;
    return "unknown key " + Quote(m.key) + " " + where + ": a comma ends a value in `{...}`, so " +
           Quote(previous.key + ": " + joined) + " was read as " +
           Quote(previous.key + ": " + previous.value.scalar) + " and a key " + Quote(m.key) +
           "; if the comma belongs to the value, quote it: " + previous.key + ": \"" + joined +
           "\"";
  }

  std::string UnknownKey(const std::string& key, const SchemaNode* n, const Ctx& ctx,
                         std::vector<std::string>* suggested) const {
    const std::string where = ctx.root ? "at the top level" : "in " + Subject(n, ctx);
    if (ctx.dispatcher != nullptr) {
      std::vector<std::string> elsewhere;
      for (const auto& [value, c] : ctx.dispatcher->cases)
        if (c->Resolved() != n && c->Resolved()->Property(key) != nullptr)
          elsewhere.push_back(value);
      if (!elsewhere.empty())
        return "key " + Quote(key) + " is not allowed " + where + " (only in " + Join(elsewhere) +
               ")";
    }
    std::vector<std::string> allowed;
    for (const auto& [name, p] : n->properties)
      if (ctx.dispatcher == nullptr || name != ctx.dispatcher->discriminator)
        allowed.push_back(name);
    const std::string close = SuggestName(key, allowed);
    if (!close.empty()) {
      suggested->push_back(close);
      return "unknown key " + Quote(key) + " " + where + ", did you mean " + Quote(close) + "?";
    }
    if (allowed.empty()) return "unknown key " + Quote(key) + " " + where + "; it takes no keys";
    return "unknown key " + Quote(key) + " " + where + "; allowed keys: " + Join(allowed);
  }

  bool Dispatch(const YamlValue& v, const SchemaNode* n, const Ctx& ctx, Issues* out) const {
    const YamlValue* d = v.Find(n->discriminator);
    if (d == nullptr || !d->IsScalar()) return true;  // `required`/`type` report these
    const SchemaNode* c = n->Case(d->scalar);
    if (c == nullptr) {
      if (n->Property(n->discriminator) != nullptr) return true;  // its enum reported it
      std::vector<std::string> values;
      for (const auto& [value, ignored] : n->cases) values.push_back(value);
      const std::string close = SuggestName(d->scalar, values);
      Report(out, *d,
             "unknown " + n->discriminator + " " + DescribeYamlValue(*d) +
                 (close.empty() ? "; expected one of: " + Join(values)
                                : ", did you mean " + Quote(close) + "?"));
      return false;
    }
    Ctx cc = ctx;
    cc.title = !n->title.empty() ? std::string_view(n->title) : ctx.title;
    cc.qualifier = d->scalar;
    cc.dispatcher = n;
    return Evaluate(v, c, cc, out);
  }

  // One message for a failed anyOf: the schema's title and examples ("a size such as 2MiB or
  // 4096") when it has a title, else the problems of the first branch of the value's type.
  std::string FormsMessage(const YamlValue& v, const SchemaNode* n, const Ctx& ctx) const {
    std::string m = ctx.Quoted() + " must be " + WithArticle(n->title);
    for (size_t i = 0; i < n->examples.size() && i < 2; ++i)
      m += (i == 0 ? " such as " : " or ") + n->examples[i]->scalar;
    m += ", got " + DescribeYamlValue(v);
    if (v.IsScalar() && options_.suggest) {
      const std::string s = options_.suggest(n->title, v.scalar);
      if (!s.empty()) m += "; did you mean " + Quote(s) + "?";
    }
    return m;
  }

  bool ExplainBranches(const YamlValue& v, const std::vector<const SchemaNode*>& branches,
                       const SchemaNode* n, const Ctx& ctx, Issues* out) const {
    if (out == nullptr) return false;
    if (!n->title.empty()) {
      Report(out, v, FormsMessage(v, n, ctx));
      return false;
    }
    const uint32_t types = YamlTypes(v);
    for (const SchemaNode* b : branches) {
      const SchemaNode* r = b->Resolved();
      if (r->types == 0 || (r->types & types) != 0) {
        Issues issues;
        Evaluate(v, b, ctx, &issues);
        if (!issues.empty()) {
          out->insert(out->end(), issues.begin(), issues.end());
          return false;
        }
      }
    }
    Report(out, v, ctx.Quoted() + " has none of the allowed forms, got " + DescribeYamlValue(v));
    return false;
  }

  bool CheckAnyOf(const YamlValue& v, const SchemaNode* n, const Ctx& ctx, Issues* out) const {
    for (const SchemaNode* b : n->any_of)
      if (Evaluate(v, b, ctx, nullptr)) return true;
    return ExplainBranches(v, n->any_of, n, ctx, out);
  }

  bool CheckOneOf(const YamlValue& v, const SchemaNode* n, const Ctx& ctx, Issues* out) const {
    int passed = 0;
    for (const SchemaNode* b : n->one_of)
      if (Evaluate(v, b, ctx, nullptr)) ++passed;
    if (passed == 1) return true;
    if (out == nullptr) return false;
    if (std::all_of(n->one_of.begin(), n->one_of.end(), IsRequiredOnly) && v.IsMap()) {
      // {oneOf: [{required: [a]}, {required: [b]}]}: exactly one of the keys.
      std::vector<std::string> keys, present;
      for (const SchemaNode* b : n->one_of)
        for (const std::string& k : b->Resolved()->required) {
          keys.push_back(k);
          if (v.Find(k) != nullptr) present.push_back(k);
        }
      const std::string subject = ctx.root ? "the top level" : Subject(n, ctx);
      if (passed == 0 && present.empty()) {
        Report(out, v, subject + " needs one of " + QuotedList(keys, " or "));
      } else {
        Report(out, v,
               subject + " takes only one of " + QuotedList(keys, " or ") + ", got " +
                   (present.size() == 2 ? std::string("both") : QuotedList(present)));
      }
      return false;
    }
    if (passed == 0) return ExplainBranches(v, n->one_of, n, ctx, out);
    Report(out, v,
           ctx.Quoted() + " matches more than one allowed form, got " + DescribeYamlValue(v));
    return false;
  }

  const SchemaValidatorOptions& options_;
};

// Appends `issues` to *diagnostics as Validate reports them; true when there were none.
bool ReportIssues(Issues& issues, const std::string& file, std::vector<Diagnostic>* diagnostics) {
  std::vector<Diagnostic> found;
  found.reserve(issues.size());
  for (Issue& i : issues)
    found.push_back(Diagnostic{LocationOf(file, i.origin, i.line, i.column), std::move(i.message)});
  SortByPosition(&found);
  diagnostics->insert(diagnostics->end(), std::make_move_iterator(found.begin()),
                      std::make_move_iterator(found.end()));
  return issues.empty();
}

}  // namespace

StatusOr<SchemaValidator> SchemaValidator::Create(const std::string& schema_json,
                                                  SchemaValidatorOptions options) {
  StatusOr<JsonSchema> schema = JsonSchema::Compile(schema_json);
  if (!schema.ok()) return schema.status();
  return SchemaValidator(std::move(schema).value(), std::move(options));
}

bool SchemaValidator::Validate(const YamlValue& document, const std::string& file,
                               std::vector<Diagnostic>* diagnostics) const {
  Issues issues;
  Ctx root;
  root.root = true;
  Checker checker(options_);
  const bool ok = checker.Evaluate(document, &schema_.root(), root, &issues);
  return ReportIssues(issues, file, diagnostics) && ok;
}

bool SchemaValidator::ValidateListItem(const YamlValue& item, std::string_view list_key,
                                       size_t index, const std::string& file,
                                       std::vector<Diagnostic>* diagnostics) const {
  const SchemaNode* list = schema_.root().Resolved()->Property(list_key);
  const SchemaNode* items = list != nullptr ? list->Resolved()->items : nullptr;
  if (items == nullptr) return false;
  Ctx root;
  root.root = true;
  const Ctx member = Member(root, list_key);
  Ctx at;
  at.parent = &member;
  at.index = static_cast<int>(index);
  Issues issues;
  const bool ok = Checker(options_).Evaluate(item, items, at, &issues);
  return ReportIssues(issues, file, diagnostics) && ok;
}

}  // namespace vmm
