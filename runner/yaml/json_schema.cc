#include "runner/yaml/json_schema.h"

#include <cerrno>
#include <cstdlib>
#include <deque>
#include <map>
#include <utility>

#include "runner/yaml/yaml_loader.h"

namespace vmm {

const SchemaNode* SchemaNode::Property(std::string_view name) const {
  for (const auto& [key, node] : properties)
    if (key == name) return node;
  return nullptr;
}

const SchemaNode* SchemaNode::Case(std::string_view value) const {
  for (const auto& [key, node] : cases)
    if (key == value) return node;
  return nullptr;
}

const SchemaNode* SchemaNode::Resolved() const {
  const SchemaNode* n = this;
  for (int hops = 0; n->ref != nullptr && hops < 64; ++hops) n = n->ref;
  return n;
}

bool YamlIsInteger(const YamlValue& v, int64_t* out) {
  if (!v.IsScalar() || v.scalar.empty()) return false;
  const char* begin = v.scalar.c_str();
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(begin, &end, 10);
  if (errno != 0 || end != begin + v.scalar.size()) return false;
  if (begin[0] == ' ' || begin[0] == '\t') return false;
  if (out != nullptr) *out = value;
  return true;
}

bool YamlIsNumber(const YamlValue& v, double* out) {
  if (!v.IsScalar() || v.scalar.empty()) return false;
  const char* begin = v.scalar.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end != begin + v.scalar.size() || begin[0] == ' ' || begin[0] == '\t') return false;
  if (out != nullptr) *out = value;
  return true;
}

bool YamlIsBoolean(const YamlValue& v, bool* out) {
  if (!v.IsScalar()) return false;
  if (v.scalar != "true" && v.scalar != "false") return false;
  if (out != nullptr) *out = v.scalar == "true";
  return true;
}

uint32_t YamlTypes(const YamlValue& v) {
  switch (v.kind) {
    case YamlValue::Kind::kNull:
      return kJsonNull;
    case YamlValue::Kind::kSequence:
      return kJsonArray;
    case YamlValue::Kind::kMap:
      return kJsonObject;
    case YamlValue::Kind::kScalar:
      break;
  }
  uint32_t t = kJsonString;
  if (YamlIsBoolean(v)) t |= kJsonBoolean;
  if (YamlIsInteger(v))
    t |= kJsonInteger | kJsonNumber;
  else if (YamlIsNumber(v))
    t |= kJsonNumber;
  return t;
}

std::string JsonTypePhrase(uint32_t types) {
  // "a number" already includes integers.
  if ((types & kJsonNumber) != 0) types &= ~static_cast<uint32_t>(kJsonInteger);
  constexpr std::pair<uint32_t, const char*> kPhrases[] = {
      {kJsonObject, "a map"},       {kJsonArray, "a list"},    {kJsonString, "a string"},
      {kJsonInteger, "an integer"}, {kJsonNumber, "a number"}, {kJsonBoolean, "true or false"},
      {kJsonNull, "empty"},
  };
  std::string out;
  for (const auto& [bit, phrase] : kPhrases) {
    if ((types & bit) == 0) continue;
    if (!out.empty()) out += " or ";
    out += phrase;
  }
  return out;
}

struct JsonSchema::Data {
  YamlValue document;
  std::deque<SchemaNode> nodes;                   // stable addresses
  std::map<std::string, SchemaNode*> by_pointer;  // compiled nodes by JSON pointer
};

namespace {

// Compiles schema documents into SchemaNodes; the first error stops it.
class Compiler {
 public:
  Compiler(const YamlValue* document, std::deque<SchemaNode>* nodes,
           std::map<std::string, SchemaNode*>* by_pointer)
      : document_(document), nodes_(nodes), by_pointer_(by_pointer) {}

  // Compiles the schema at `pointer` (a node of the document); memoized, so recursive $refs work.
  SchemaNode* Node(const YamlValue& value, const std::string& pointer) {
    auto found = by_pointer_->find(pointer);
    if (found != by_pointer_->end()) return found->second;
    SchemaNode* node = &nodes_->emplace_back();
    node->pointer = pointer;
    (*by_pointer_)[pointer] = node;
    Fill(value, node);
    return node;
  }

  Status status() const { return status_; }

 private:
  void Fail(const std::string& pointer, const std::string& what) {
    if (status_.ok()) status_ = InvalidInput("schema " + pointer + ": " + what);
  }

  const YamlValue* Resolve(const std::string& ref) {
    if (ref.empty() || ref[0] != '#') return nullptr;
    const YamlValue* v = document_;
    size_t pos = 1;
    while (pos < ref.size()) {
      if (ref[pos] != '/') return nullptr;
      size_t next = ref.find('/', pos + 1);
      if (next == std::string::npos) next = ref.size();
      std::string token;  // unescaped: "~1" is '/', "~0" is '~'
      for (size_t i = pos + 1; i < next; ++i) {
        if (ref[i] == '~' && i + 1 < next && (ref[i + 1] == '0' || ref[i + 1] == '1')) {
          token += ref[i + 1] == '1' ? '/' : '~';
          ++i;
        } else {
          token += ref[i];
        }
      }
      if (v->IsMap()) {
        v = v->Find(token);
      } else if (v->IsSequence()) {
        int64_t index = 0;
        YamlValue tmp;
        tmp.kind = YamlValue::Kind::kScalar;
        tmp.scalar = token;
        if (!YamlIsInteger(tmp, &index) || index < 0 ||
            static_cast<size_t>(index) >= v->items.size())
          return nullptr;
        v = &v->items[static_cast<size_t>(index)];
      } else {
        return nullptr;
      }
      if (v == nullptr) return nullptr;
      pos = next;
    }
    return v;
  }

  std::optional<uint64_t> Count(const YamlValue& v, const std::string& where) {
    int64_t n = 0;
    if (!YamlIsInteger(v, &n) || n < 0) {
      Fail(where, "expected a non-negative integer");
      return std::nullopt;
    }
    return static_cast<uint64_t>(n);
  }

  std::vector<const SchemaNode*> List(const YamlValue& v, const std::string& where) {
    std::vector<const SchemaNode*> out;
    if (!v.IsSequence() || v.items.empty()) {
      Fail(where, "expected a non-empty list of schemas");
      return out;
    }
    for (size_t i = 0; i < v.items.size(); ++i)
      out.push_back(Node(v.items[i], where + "/" + std::to_string(i)));
    return out;
  }

  // Recognises {if: {required: [K], properties: {K: {const: V}}}, then: S}; returns K and V.
  static bool IsCase(const YamlValue& member, std::string* key, std::string* value) {
    if (!member.IsMap() || member.members.size() != 2) return false;
    const YamlValue* if_v = member.Find("if");
    if (if_v == nullptr || member.Find("then") == nullptr || !if_v->IsMap()) return false;
    const YamlValue* props = if_v->Find("properties");
    const YamlValue* req = if_v->Find("required");
    if (props == nullptr || !props->IsMap() || props->members.size() != 1) return false;
    if (if_v->members.size() != (req != nullptr ? 2u : 1u)) return false;
    const YamlMember& prop = props->members[0];
    if (!prop.value.IsMap() || prop.value.members.size() != 1) return false;
    const YamlValue* c = prop.value.Find("const");
    if (c == nullptr || !c->IsScalar()) return false;
    if (req != nullptr &&
        (!req->IsSequence() || req->items.size() != 1 || req->items[0].scalar != prop.key))
      return false;
    *key = prop.key;
    *value = c->scalar;
    return true;
  }

  void Fill(const YamlValue& v, SchemaNode* n) {
    const std::string& p = n->pointer;
    if (!v.IsMap()) {
      // Boolean schemas are not used by our schemas.
      Fail(p, "expected a schema object");
      return;
    }
    for (const YamlMember& m : v.members) {
      const std::string& k = m.key;
      const YamlValue& x = m.value;
      const std::string at = p + "/" + k;
      if (k == "$schema" || k == "$id" || k == "$comment" || k == "definitions") {
        // Annotations; definitions compile when referenced.
      } else if (k == "title") {
        n->title = x.scalar;
      } else if (k == "description") {
        n->description = x.scalar;
      } else if (k == "errorMessage") {
        n->error_message = x.scalar;
      } else if (k == "default") {
        n->default_value = &x;
      } else if (k == "examples") {
        if (!x.IsSequence()) Fail(at, "expected a list");
        for (const YamlValue& e : x.items) n->examples.push_back(&e);
      } else if (k == "type") {
        for (const YamlValue& t : x.IsSequence() ? x.items : std::vector<YamlValue>{x}) {
          const std::string& s = t.scalar;
          constexpr std::pair<const char*, uint32_t> kTypes[] = {
              {"null", kJsonNull},     {"boolean", kJsonBoolean}, {"integer", kJsonInteger},
              {"number", kJsonNumber}, {"string", kJsonString},   {"array", kJsonArray},
              {"object", kJsonObject}};
          uint32_t bit = 0;
          for (const auto& [name, value] : kTypes)
            if (s == name) bit = value;
          if (bit == 0) Fail(at, "unknown type '" + s + "'");
          n->types |= bit;
        }
      } else if (k == "const") {
        if (!x.IsScalar()) Fail(at, "only scalar constants are supported");
        n->const_value = &x;
      } else if (k == "enum") {
        n->has_enum = true;
        if (!x.IsSequence()) Fail(at, "expected a list");
        for (const YamlValue& e : x.items) {
          if (!e.IsScalar()) Fail(at, "only scalar enum values are supported");
          n->enum_values.push_back(e.scalar);
        }
      } else if (k == "pattern") {
        n->pattern_source = x.scalar;
        try {
          n->pattern.emplace(x.scalar, std::regex::ECMAScript | std::regex::optimize);
        } catch (const std::regex_error& e) {
          Fail(at, std::string("bad regular expression: ") + e.what());
        }
      } else if (k == "minimum" || k == "maximum") {
        double d = 0;
        if (!YamlIsNumber(x, &d)) Fail(at, "expected a number");
        (k == "minimum" ? n->minimum : n->maximum) = d;
      } else if (k == "minLength") {
        n->min_length = Count(x, at);
      } else if (k == "maxLength") {
        n->max_length = Count(x, at);
      } else if (k == "minItems") {
        n->min_items = Count(x, at);
      } else if (k == "maxItems") {
        n->max_items = Count(x, at);
      } else if (k == "required") {
        if (!x.IsSequence()) Fail(at, "expected a list of names");
        for (const YamlValue& r : x.items) n->required.push_back(r.scalar);
      } else if (k == "properties") {
        if (!x.IsMap()) Fail(at, "expected a map of schemas");
        for (const YamlMember& prop : x.members)
          n->properties.emplace_back(prop.key, Node(prop.value, at + "/" + prop.key));
      } else if (k == "additionalProperties") {
        bool b = true;
        if (YamlIsBoolean(x, &b)) {
          n->additional_allowed = b;
        } else {
          n->additional = Node(x, at);
        }
      } else if (k == "items") {
        if (x.IsSequence()) Fail(at, "tuple-form items is not supported");
        n->items = Node(x, at);
      } else if (k == "allOf") {
        if (!x.IsSequence()) Fail(at, "expected a list of schemas");
        for (size_t i = 0; i < x.items.size(); ++i) {
          std::string key, value;
          const std::string item_at = at + "/" + std::to_string(i);
          if (IsCase(x.items[i], &key, &value) &&
              (n->discriminator.empty() || n->discriminator == key)) {
            n->discriminator = key;
            n->cases.emplace_back(value, Node(*x.items[i].Find("then"), item_at + "/then"));
          } else {
            n->all_of.push_back(Node(x.items[i], item_at));
          }
        }
      } else if (k == "anyOf") {
        n->any_of = List(x, at);
      } else if (k == "oneOf") {
        n->one_of = List(x, at);
      } else if (k == "if") {
        n->if_schema = Node(x, at);
      } else if (k == "then") {
        n->then_schema = Node(x, at);
      } else if (k == "else") {
        n->else_schema = Node(x, at);
      } else if (k == "$ref") {
        const YamlValue* target = Resolve(x.scalar);
        if (target == nullptr) {
          Fail(at,
               "cannot resolve '" + x.scalar + "' (only local pointers \"#/...\" are supported)");
        } else {
          n->ref = Node(*target, x.scalar);
        }
      } else {
        Fail(at, "keyword '" + k + "' is not supported");
      }
    }
    if (n->ref != nullptr &&
        (n->types != 0 || n->has_enum || n->const_value != nullptr || !n->properties.empty() ||
         !n->required.empty() || !n->all_of.empty() || !n->any_of.empty() || !n->one_of.empty())) {
      Fail(p, "'$ref' must not have assertion siblings (draft-07 ignores them); wrap it in allOf");
    }
    if ((n->then_schema != nullptr || n->else_schema != nullptr) && n->if_schema == nullptr)
      Fail(p, "'then'/'else' without 'if'");
  }

  const YamlValue* document_;
  std::deque<SchemaNode>* nodes_;
  std::map<std::string, SchemaNode*>* by_pointer_;
  Status status_;
};

}  // namespace

StatusOr<JsonSchema> JsonSchema::Compile(const std::string& schema_json) {
  auto data = std::make_unique<Data>();
  std::vector<Diagnostic> diagnostics;
  std::optional<YamlValue> doc = LoadYaml(schema_json, "schema", &diagnostics);
  if (!doc || !diagnostics.empty()) {
    return InvalidInput("schema is not valid JSON: " + FormatDiagnostics(diagnostics));
  }
  data->document = std::move(*doc);
  Compiler compiler(&data->document, &data->nodes, &data->by_pointer);
  compiler.Node(data->document, "#");
  if (!compiler.status().ok()) return compiler.status();
  return JsonSchema(std::move(data));
}

JsonSchema::JsonSchema(std::unique_ptr<Data> data) : data_(std::move(data)) {}
JsonSchema::JsonSchema(JsonSchema&&) noexcept = default;
JsonSchema& JsonSchema::operator=(JsonSchema&&) noexcept = default;
JsonSchema::~JsonSchema() = default;

const SchemaNode& JsonSchema::root() const { return *data_->by_pointer.at("#"); }

const SchemaNode* JsonSchema::Find(const std::string& pointer) const {
  auto found = data_->by_pointer.find(pointer);
  return found == data_->by_pointer.end() ? nullptr : found->second;
}

const YamlValue& JsonSchema::document() const { return data_->document; }

}  // namespace vmm
