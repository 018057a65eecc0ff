#include "runner/scenario/partial_scenario.h"

#include <algorithm>
#include <climits>
#include <set>

#include "runner/scenario/scenario_builder.h"
#include "runner/yaml/schema_validator.h"

namespace vmm {
namespace {

// The keys whose values name things (buffers, allocs, graphs, steps, ...), not amounts.
bool NamesSomething(const std::string& key) {
  static const std::set<std::string> kKeys = {
      "buffer", "alloc", "graph",  "exec",   "snapshot", "from",     "to",      "of",
      "name",   "event", "handle", "since",  "step",     "until",    "same_as", "a",
      "b",      "c",     "node",   "signal", "wait_for", "set_flag", "flag"};
  return kKeys.count(key) != 0;
}

void Scalars(const YamlValue& v, std::set<std::string>* out) {
  if (v.IsScalar()) out->insert(v.scalar);
  for (const YamlValue& item : v.items) Scalars(item, out);
}

// The names a step uses or makes, its nested steps' included.
void Names(const YamlValue& v, std::set<std::string>* out) {
  for (const YamlValue& item : v.items) Names(item, out);
  for (const YamlMember& m : v.members) {
    if (NamesSomething(m.key)) Scalars(m.value, out);
    if (m.value.IsMap() || m.value.IsSequence()) Names(m.value, out);
  }
}

}  // namespace

bool PartialScenario::Tainted(int line) const {
  return std::any_of(tainted.begin(), tainted.end(), [&](const std::pair<int, int>& s) {
    return line >= s.first && line <= s.second;
  });
}

void SetAsideBadSteps(const YamlValue& doc, const std::string& file,
                      const std::vector<Diagnostic>& errors, const SchemaValidator& validator,
                      PartialScenario* partial) {
  *partial = PartialScenario{};
  const YamlValue* steps = doc.Find("steps");
  if (steps == nullptr || !steps->IsSequence() || steps->items.empty()) return;
  // Each top-level step's lines: from its own to the line before the next step, or before the
  // next top-level key after `steps:`, or the end of the file.
  int end_of_steps = INT_MAX;
  for (const YamlMember& m : doc.members)
    if (m.line > steps->items.back().line && m.line - 1 < end_of_steps) end_of_steps = m.line - 1;
  const size_t n = steps->items.size();
  std::vector<std::pair<int, int>> spans(n);
  for (size_t i = 0; i < n; ++i)
    spans[i] = {steps->items[i].line, i + 1 < n ? steps->items[i + 1].line - 1 : end_of_steps};
  std::vector<bool> bad(n, false);
  for (const Diagnostic& e : errors) {
    if (e.loc.file() != file || e.loc.line <= 0) return;
    bool inside = false;
    for (size_t i = 0; i < n && !inside; ++i) {
      if (e.loc.line < spans[i].first || e.loc.line > spans[i].second) continue;
      bad[i] = inside = true;
    }
    if (!inside) return;  // an error outside the steps: nothing to set aside
  }
  YamlValue kept = doc;
  YamlValue* kept_steps = nullptr;
  for (YamlMember& m : kept.members)
    if (m.key == "steps") kept_steps = &m.value;
  kept_steps->items.clear();
  std::set<std::string> dropped_names;
  for (size_t i = 0; i < n; ++i) {
    if (bad[i]) {
      Names(steps->items[i], &dropped_names);
    } else {
      kept_steps->items.push_back(steps->items[i]);
    }
  }
  if (kept_steps->items.empty()) return;
  std::vector<Diagnostic> again;
  if (!validator.Validate(kept, file, &again) || !again.empty()) return;
  std::vector<Diagnostic> built;
  partial->scenario = BuildScenario(kept, validator.schema(), file, &built);
  if (!partial->scenario || !built.empty()) {
    partial->scenario.reset();
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    if (bad[i]) continue;
    std::set<std::string> mine;
    Names(steps->items[i], &mine);
    if (std::any_of(mine.begin(), mine.end(),
                    [&](const std::string& name) { return dropped_names.count(name) != 0; }))
      partial->tainted.push_back(spans[i]);
  }
}

}  // namespace vmm
