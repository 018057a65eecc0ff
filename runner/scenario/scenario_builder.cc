#include "runner/scenario/scenario_builder.h"

#include <limits>

#include "runner/scenario/size.h"

namespace vmm {
namespace {

class Builder {
 public:
  Builder(const JsonSchema& schema, const std::string& file, std::vector<Diagnostic>* diagnostics)
      : schema_(schema), file_(file), diagnostics_(diagnostics) {}

  std::optional<Scenario> Build(const YamlValue& doc) {
    Scenario s;
    s.file = file_;
    const SchemaNode& root = schema_.root();
    if (const YamlValue* v = Value(doc, root, "version")) s.version = static_cast<int>(Integer(*v));
    if (const YamlValue* v = doc.Find("name")) s.name = v->scalar;
    if (const YamlValue* v = doc.Find("description")) s.description = v->scalar;
    s.granularity.loc = Loc(doc);
    if (const YamlValue* v = Value(doc, root, "granularity")) {
      s.granularity.value = Size(*v, "granularity");
      s.granularity.set = doc.Find("granularity") != nullptr;
      s.granularity.loc = Loc(*v);
    }
    if (const YamlValue* buffers = doc.Find("buffers")) {
      for (const YamlMember& m : buffers->members) {
        BufferDecl b;
        b.name = m.key;
        b.loc = LocationOf(file_, buffers->origin, m.line, m.column);
        if (const YamlValue* shape = m.value.Find("shape"))
          for (const YamlValue& d : shape->items)
            b.shape.push_back(static_cast<uint64_t>(Integer(d)));
        if (const YamlValue* dtype = m.value.Find("dtype")) b.dtype = dtype->scalar;
        s.buffers.push_back(std::move(b));
      }
    }
    const SchemaNode* step_schema = root.Property("steps");
    step_schema = step_schema != nullptr ? step_schema->Resolved()->items : nullptr;
    if (const YamlValue* steps = doc.Find("steps"); steps != nullptr && step_schema != nullptr)
      s.steps = Steps(*steps, step_schema);
    if (failed_) return std::nullopt;
    return s;
  }

 private:
  SourceLoc Loc(const YamlValue& v) const { return LocationOf(file_, v); }

  // The member `key` of `map`, or the schema default of property `key`, or nullptr.
  static const YamlValue* Value(const YamlValue& map, const SchemaNode& schema, const char* key) {
    if (const YamlValue* v = map.Find(key)) return v;
    const SchemaNode* p = schema.Resolved()->Property(key);
    return p != nullptr ? p->default_value : nullptr;
  }

  void Error(const YamlValue& at, std::string message) {
    failed_ = true;
    diagnostics_->push_back(Diagnostic{Loc(at), std::move(message)});
  }

  int64_t Integer(const YamlValue& v) {
    int64_t i = 0;
    if (!YamlIsInteger(v, &i)) Error(v, "expected an integer, got " + DescribeYamlValue(v));
    return i;
  }

  uint64_t Size(const YamlValue& v, const std::string& key) {
    bool overflow = false;
    if (std::optional<uint64_t> bytes = ParseSize(v.scalar, &overflow)) return *bytes;
    int64_t i = 0;
    if (!overflow && YamlIsInteger(v, &i) && i >= 0) return static_cast<uint64_t>(i);
    Error(v, overflow ? "'" + key + "' is too large: " + DescribeYamlValue(v) +
                            " does not fit in 64 bits"
                      : "'" + key + "' must be a size, got " + DescribeYamlValue(v));
    return 0;
  }

  std::vector<Step> Steps(const YamlValue& list, const SchemaNode* item_schema) {
    std::vector<Step> steps;
    steps.reserve(list.items.size());
    const SchemaNode* dispatch = item_schema->Resolved();
    for (const YamlValue& item : list.items) {
      Step step;
      step.loc = Loc(item);
      const YamlValue* op = item.Find(dispatch->discriminator);
      const SchemaNode* fields = op != nullptr ? dispatch->Case(op->scalar) : nullptr;
      if (op == nullptr || fields == nullptr || !ParseOpName(op->scalar, &step.op)) {
        Error(item, "internal error: step without a known op passed the schema");
        continue;
      }
      for (const auto& [key, prop] : fields->Resolved()->properties) {
        if (key == dispatch->discriminator) continue;
        const YamlValue* v = item.Find(key);
        const bool set = v != nullptr;
        if (!set) v = prop->Resolved()->default_value;
        if (v == nullptr) v = prop->default_value;
        if (v == nullptr) continue;
        Assign(&step, key, *v, set ? Loc(*v) : step.loc, set, prop);
      }
      steps.push_back(std::move(step));
    }
    return steps;
  }

  template <typename T>
  static void Put(Located<T>* field, T value, const SourceLoc& loc, bool set) {
    field->value = std::move(value);
    field->loc = loc;
    field->set = set;
  }

  void Assign(Step* step, const std::string& key, const YamlValue& v, const SourceLoc& loc,
              bool set, const SchemaNode* prop) {
    struct Text {
      const char* key;
      Located<std::string> Step::*field;
    };
    constexpr Text kTexts[] = {
        {"name", &Step::name},   {"buffer", &Step::buffer}, {"alloc", &Step::alloc},
        {"graph", &Step::graph}, {"exec", &Step::exec},     {"snapshot", &Step::snapshot},
        {"other", &Step::other}, {"a", &Step::a},           {"b", &Step::b},
        {"c", &Step::c},         {"access", &Step::access}, {"expect", &Step::expect},
    };
    for (const Text& t : kTexts) {
      if (key == t.key) return Put(&(step->*t.field), v.scalar, loc, set);
    }
    struct Bytes {
      const char* key;
      Located<uint64_t> Step::*field;
    };
    constexpr Bytes kSizes[] = {{"size", &Step::size},
                                {"offset", &Step::offset},
                                {"alloc_offset", &Step::alloc_offset},
                                {"alignment", &Step::alignment}};
    for (const Bytes& b : kSizes) {
      if (key == b.key) return Put(&(step->*b.field), Size(v, key), loc, set);
    }
    if (key == "seed") return Put(&step->seed, static_cast<uint64_t>(Integer(v)), loc, set);
    if (key == "repeat") return Put(&step->repeat, static_cast<uint32_t>(Integer(v)), loc, set);
    if (key == "fatal") return Put(&step->fatal, v.scalar == "true", loc, set);
    if (key == "async") return Put(&step->async, v.scalar == "true", loc, set);
    if (key == "of" || key == "graphs") {
      std::vector<Located<std::string>>& list = key == "of" ? step->of : step->graphs;
      for (const YamlValue& item : v.items) list.push_back({item.scalar, Loc(item), true});
      return;
    }
    if (key == "steps") {
      const SchemaNode* items = prop->Resolved()->items;
      if (items != nullptr) step->steps = Steps(v, items);
      return;
    }
    Error(v, "internal error: the schema's key '" + key + "' has no field in Step");
  }

  const JsonSchema& schema_;
  const std::string& file_;
  std::vector<Diagnostic>* diagnostics_;
  bool failed_ = false;
};

}  // namespace

std::optional<Scenario> BuildScenario(const YamlValue& document, const JsonSchema& schema,
                                      const std::string& file,
                                      std::vector<Diagnostic>* diagnostics) {
  return Builder(schema, file, diagnostics).Build(document);
}

}  // namespace vmm
