#include "runner/scenario/step_docs.h"

#include <algorithm>
#include <cmath>

#include "runner/base/diagnostic.h"

namespace vmm {
namespace {

// The schema of one step, the dispatching node (whose cases are the ops), or nullptr.
const SchemaNode* StepDispatch(const JsonSchema& schema) {
  const SchemaNode* step = schema.Find("#/definitions/step");
  if (step == nullptr) return nullptr;
  step = step->Resolved();
  return step->cases.empty() ? nullptr : step;
}

// The word an isolate block is documented under (`vmm-run steps isolate`).
constexpr const char* kBlockWord = "isolate";

// The groups, each documented under its word (`vmm-run steps together`, `vmm-run steps threads`):
// its schema definition, how it is written, and the definition of its items' own keys (or null).
struct GroupDoc {
  const char* word;
  const char* definition;
  const char* written;
  const char* item_definition;
};
constexpr GroupDoc kGroups[] = {
    {"together", "#/definitions/together_group", "{together: [{isolate: ...}, ...], name: ...}",
     nullptr},
    {"threads", "#/definitions/threads_group",
     "{threads: [{thread: NAME, steps: [...]}, ...], name: ...}", "#/definitions/thread"},
};

std::string Number(double d) {
  if (std::floor(d) == d) return std::to_string(static_cast<int64_t>(d));
  return std::to_string(d);
}

std::string DefaultText(const SchemaNode* p) {
  const YamlValue* d =
      p->default_value != nullptr ? p->default_value : p->Resolved()->default_value;
  if (d == nullptr) return "";
  if (d->IsScalar()) return d->scalar;
  return d->IsMap() ? "{}" : "[]";
}

// Wraps `text` at `width` columns, indenting continuation lines by `indent` spaces.
std::string Wrap(const std::string& text, size_t indent, size_t width) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

constexpr size_t kWidth = 100;

// One line pair per field of `n` (keys written with `prefix` in front), skipping `skip`.
std::string DescribeFields(const SchemaNode* n, const std::string& prefix, const std::string& skip,
                           size_t name_width) {
  std::string out;
  const size_t indent = 2 + name_width + 2;
  for (const auto& [name, p] : n->properties) {
    if (name == skip) continue;
    const std::string key = prefix + name;
    const bool required =
        std::find(n->required.begin(), n->required.end(), name) != n->required.end();
    const std::string def = DefaultText(p);
    const std::string type = SchemaTypeSummary(p) + (required      ? ", required"
                                                     : def.empty() ? ", optional"
                                                                   : ", default " + def);
    const std::string& description =
        !p->description.empty() ? p->description : p->Resolved()->description;
    out += "  " + key + std::string(indent - 2 - key.size(), ' ') + type + "\n";
    out += std::string(indent, ' ') + Wrap(description, indent, kWidth) + "\n";
  }
  return out;
}

size_t KeyWidth(const SchemaNode* n, size_t prefix) {
  size_t width = 0;
  for (const auto& [key, p] : n->properties) width = std::max(width, prefix + key.size());
  return width;
}

std::string DescribeOp(const std::string& op, const SchemaNode* fields,
                       const std::string& discriminator) {
  const SchemaNode* n = fields->Resolved();
  std::string out = Wrap(op + ": " + n->description, 4, kWidth) + "\n";
  out += DescribeFields(n, "", discriminator, KeyWidth(n, 0));
  if (!n->one_of.empty()) {
    std::string keys;
    for (const SchemaNode* b : n->one_of)
      for (const std::string& k : b->Resolved()->required)
        keys += (keys.empty() ? "'" : " or '") + k + "'";
    out += "  (give exactly one of " + keys + ")\n";
  }
  return out;
}

}  // namespace

std::string SchemaTypeSummary(const SchemaNode* node) {
  const SchemaNode* n = node->Resolved();
  if (!n->title.empty()) return n->title;
  if (n->has_enum) {
    std::string out;
    for (const std::string& v : n->enum_values) out += (out.empty() ? "" : " | ") + v;
    return out;
  }
  if (n->const_value != nullptr) return n->const_value->scalar;
  if (n->types == kJsonArray) {
    std::string out = "list";
    if (n->items != nullptr) out += " of " + SchemaTypeSummary(n->items);
    if (n->min_items && n->max_items && *n->min_items == *n->max_items) {
      out += " (" + std::to_string(*n->min_items) + ")";
    } else if (n->min_items && *n->min_items > 1) {
      out += " (" + std::to_string(*n->min_items) + "+)";
    }
    return out;
  }
  if (n->types == kJsonInteger) {
    if (n->minimum && n->maximum)
      return "integer " + Number(*n->minimum) + ".." + Number(*n->maximum);
    if (n->minimum) return "integer >= " + Number(*n->minimum);
    return "integer";
  }
  if (n->types == kJsonBoolean) return "true | false";
  if (n->types == kJsonString) return "string";
  if (n->types == kJsonObject) return "map";
  if (n->all_of.size() == 1) return SchemaTypeSummary(n->all_of[0]);
  if (!n->any_of.empty()) {  // the forms, e.g. "map | isolate expectation"
    std::string out;
    for (const SchemaNode* b : n->any_of) out += (out.empty() ? "" : " | ") + SchemaTypeSummary(b);
    return out;
  }
  if (n->types != 0) return JsonTypePhrase(n->types);
  return "any";
}

// The isolate block: its own keys, then the keys of its `isolate:` map as "isolate.<key>".
std::string DescribeBlock(const JsonSchema& schema) {
  const SchemaNode* block = schema.Find("#/definitions/isolate_block");
  const SchemaNode* spec = schema.Find("#/definitions/isolate");
  if (block == nullptr || spec == nullptr) return "";
  block = block->Resolved();
  spec = spec->Resolved();
  const std::string prefix = std::string(kBlockWord) + ".";
  const size_t width = std::max(KeyWidth(block, 0), KeyWidth(spec, prefix.size()));
  std::string out =
      Wrap(std::string(kBlockWord) +
               " (a block, written {isolate: {expect: ...}, steps: [...]}): " + block->description,
           4, kWidth) +
      "\n";
  out += DescribeFields(spec, prefix, "", width);
  out += DescribeFields(block, "", kBlockWord, width);
  return out;
}

// A group: its keys, and its items' keys where they have their own.
std::string DescribeGroup(const JsonSchema& schema, const GroupDoc& doc) {
  const SchemaNode* group = schema.Find(doc.definition);
  if (group == nullptr) return "";
  group = group->Resolved();
  std::string out =
      Wrap(std::string(doc.word) + " (a group, written " + doc.written + "): " + group->description,
           4, kWidth) +
      "\n";
  out += DescribeFields(group, "", "", KeyWidth(group, 0));
  if (const SchemaNode* item = doc.item_definition ? schema.Find(doc.item_definition) : nullptr) {
    item = item->Resolved();
    out += DescribeFields(item, "", "", KeyWidth(item, 0));  // a thread's own keys
  }
  return out;
}

std::string DescribeStepsFromSchema(const JsonSchema& schema) {
  const SchemaNode* dispatch = StepDispatch(schema);
  if (dispatch == nullptr) return "";
  std::string out =
      "Steps of a vmm-run scenario (each is a map with 'op' and the fields below).\n"
      "Sizes are bytes: an integer or a number with a unit (B, KiB, MiB, GiB, TiB).\n";
  for (const auto& [op, fields] : dispatch->cases) {
    out += '\n';
    out += DescribeOp(op, fields, dispatch->discriminator);
  }
  out += "\n" + DescribeBlock(schema);
  for (const GroupDoc& group : kGroups) out += "\n" + DescribeGroup(schema, group);
  out +=
      "\nVariables, loops and includes (expanded before validation; `vmm-run expand FILE` shows\n"
      "the result; docs/scenario-language.md has the details):\n"
      "  vars: {pages: 512, page: 2MiB}      top level; --set pages=8 overrides\n"
      "  size: ${pages * page}               integer arithmetic + - * / % ( ), sizes, variables\n"
      "  alloc: p${i}                        ${...} inside text gives text\n"
      "  - {for: i, in: {range: [0, 8]}, steps: [...]}    also in: [2MiB, 4MiB]; loops nest\n"
      "  include: [frags/page_cycle.yaml]   then a step {use: page_cycle, with: {n: 8}}\n"
      "  sweep: {page: [2MiB, 4MiB], pages: {range: [1, 5]}}   run once per point (vars)\n";
  return out;
}

std::string DescribeStepFromSchema(const JsonSchema& schema, const std::string& op,
                                   std::string* error) {
  const SchemaNode* dispatch = StepDispatch(schema);
  if (dispatch == nullptr) {
    *error = "the schema defines no steps";
    return "";
  }
  if (const SchemaNode* fields = dispatch->Case(op))
    return DescribeOp(op, fields, dispatch->discriminator);
  if (op == kBlockWord) return DescribeBlock(schema);
  for (const GroupDoc& group : kGroups)
    if (op == group.word) return DescribeGroup(schema, group);
  std::vector<std::string> ops;
  for (const auto& [name, unused] : dispatch->cases) ops.push_back(name);
  ops.push_back(kBlockWord);
  for (const GroupDoc& group : kGroups) ops.push_back(group.word);
  const std::string close = ClosestMatch(op, ops);
  if (!close.empty()) {
    *error = "unknown op '" + op + "', did you mean '" + close + "'?";
  } else {
    std::string all;
    for (const std::string& o : ops) all += (all.empty() ? "" : ", ") + o;
    *error = "unknown op '" + op + "'; ops are: " + all;
  }
  return "";
}

}  // namespace vmm
