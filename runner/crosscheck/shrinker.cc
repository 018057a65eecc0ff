#include "runner/crosscheck/shrinker.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <set>
#include <vector>

#include "runner/yaml/yaml_loader.h"
#include "runner/yaml/yaml_writer.h"

namespace vmm {
namespace {

// The keys whose value names something a step makes, for later steps to use.
constexpr const char* kMakes[] = {"alloc", "graph", "exec", "snapshot", "handle", "name"};
// Keys a step can lose and stay a step of the same op.
constexpr const char* kOptional[] = {"name", "repeat", "async", "fatal", "upload", "pinned"};

YamlValue* Member(YamlValue& map, const std::string& key) {
  if (!map.IsMap()) return nullptr;
  for (YamlMember& m : map.members)
    if (m.key == key) return &m.value;
  return nullptr;
}

// Every scalar in `v` (deep).
void Scalars(const YamlValue& v, std::set<std::string>* out) {
  if (v.IsScalar()) out->insert(v.scalar);
  for (const YamlValue& i : v.items) Scalars(i, out);
  for (const YamlMember& m : v.members) Scalars(m.value, out);
}

// Every list below `v` whose items may go one by one: step lists (capture, if/while, isolate and
// thread bodies, branches), a together group's blocks and a threads group's threads.
void StepLists(YamlValue& v, std::vector<YamlValue*>* out) {
  if (v.IsSequence()) {
    for (YamlValue& i : v.items) StepLists(i, out);
    return;
  }
  if (!v.IsMap()) return;
  for (YamlMember& m : v.members) {
    const bool list = m.key == "steps" || m.key == "together" || m.key == "threads";
    if (list && m.value.IsSequence()) out->push_back(&m.value);
    if (list || m.key == "branches") StepLists(m.value, out);
  }
}

// A size as the language writes it ("4MiB", "2097152"), or nullopt for anything else.
std::optional<uint64_t> SizeOf(const std::string& text) {
  uint64_t n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  const std::string unit(end, text.data() + text.size());
  if (unit.empty()) return n;
  if (unit == "KiB") return n << 10;
  if (unit == "MiB") return n << 20;
  if (unit == "GiB") return n << 30;
  return std::nullopt;
}

// The keys whose values are byte counts that scale with the data (a scenario's sizes and offsets).
constexpr const char* kSizeKeys[] = {"size", "offset", "alloc_offset"};

// Halves every size and offset below `v` and every dimension of the shapes in `decls`; false when
// one of them is odd (the scale would not be exact) or there is nothing to halve.
bool HalveAll(YamlValue& v, bool* any) {
  if (v.IsSequence()) {
    for (YamlValue& i : v.items)
      if (!HalveAll(i, any)) return false;
    return true;
  }
  if (!v.IsMap()) return true;
  for (YamlMember& m : v.members) {
    const bool size_key =
        std::find(std::begin(kSizeKeys), std::end(kSizeKeys), m.key) != std::end(kSizeKeys);
    if (size_key && m.value.IsScalar()) {
      const std::optional<uint64_t> n = SizeOf(m.value.scalar);
      if (!n) continue;  // an expression or a word: left as it is
      if (*n % 2 != 0) return false;
      m.value.scalar = std::to_string(*n / 2);
      *any = *any || *n != 0;
    } else if (m.key == "shape" && m.value.IsSequence()) {
      for (YamlValue& d : m.value.items) {
        const std::optional<uint64_t> n = SizeOf(d.scalar);
        if (!n || *n % 2 != 0) return false;
        d.scalar = std::to_string(*n / 2);
        *any = true;
      }
    } else if (!HalveAll(m.value, any)) {
      return false;
    }
  }
  return true;
}

class Shrinker {
 public:
  Shrinker(YamlValue doc, const std::function<bool(const std::string&)>& keep, int budget,
           ShrinkStats* stats)
      : doc_(std::move(doc)), keep_(keep), budget_(budget), stats_(stats) {}

  std::string Run() {
    bool progress = true;
    while (progress && !Spent()) {
      progress = false;
      progress = RemoveWithDependents() || progress;
      progress = RemoveRuns() || progress;
      progress = RemoveDeclarations() || progress;
      progress = RemoveOptionalKeys() || progress;
      progress = HalveEverything() || progress;
      progress = HalveShapes() || progress;
    }
    return WriteYaml(doc_);
  }

 private:
  bool Spent() {
    if (stats_->candidates >= budget_) stats_->budget_spent = true;
    return stats_->budget_spent;
  }
  // Tries `candidate`: keeps it as the document when the outcome holds.
  bool Try(YamlValue candidate) {
    if (Spent()) return false;
    ++stats_->candidates;
    std::swap(doc_, candidate);
    if (keep_(WriteYaml(doc_))) {
      ++stats_->kept;
      return true;
    }
    std::swap(doc_, candidate);
    return false;
  }
  YamlValue* TopSteps(YamlValue& doc) { return Member(doc, "steps"); }

  bool RemoveWithDependents() {
    bool any = false;
    for (size_t i = 0;; ++i) {
      YamlValue* steps = TopSteps(doc_);
      if (steps == nullptr || i >= steps->items.size() || Spent()) break;
      std::set<std::string> made;
      for (const char* key : kMakes)
        if (const YamlValue* v = steps->items[i].Find(key); v != nullptr && v->IsScalar())
          made.insert(v->scalar);
      const YamlValue* op = steps->items[i].Find("op");
      if (op != nullptr && op->scalar == "reserve")  // the reservation: what maps into it goes too
        if (const YamlValue* b = steps->items[i].Find("buffer")) made.insert(b->scalar);
      YamlValue candidate = doc_;
      std::vector<YamlValue>& items = TopSteps(candidate)->items;
      std::vector<YamlValue> kept(items.begin(), items.begin() + static_cast<long>(i));
      for (size_t j = i + 1; j < items.size(); ++j) {
        std::set<std::string> used;
        Scalars(items[j], &used);
        bool depends = false;
        for (const std::string& name : made) depends = depends || used.count(name) > 0;
        if (depends) {  // it goes too, and so does what it made
          for (const char* key : kMakes)
            if (const YamlValue* v = items[j].Find(key); v != nullptr && v->IsScalar())
              made.insert(v->scalar);
        } else {
          kept.push_back(items[j]);
        }
      }
      items = std::move(kept);
      if (Try(std::move(candidate))) {
        any = true;
        --i;  // the step now at i is another one
      }
    }
    return any;
  }

  bool RemoveRuns() {
    bool any = false;
    std::vector<YamlValue*> lists;
    for (size_t list = 0;; ++list) {
      lists.clear();
      StepLists(doc_, &lists);
      if (list >= lists.size() || Spent()) break;
      for (size_t chunk = std::max<size_t>(lists[list]->items.size() / 2, 1); chunk >= 1;
           chunk /= 2) {
        for (size_t at = 0;;) {
          lists.clear();
          StepLists(doc_, &lists);
          if (list >= lists.size() || at >= lists[list]->items.size() || Spent()) break;
          YamlValue candidate = doc_;
          std::vector<YamlValue*> candidate_lists;
          StepLists(candidate, &candidate_lists);
          std::vector<YamlValue>& items = candidate_lists[list]->items;
          if (items.size() <= 1 && list > 0) break;  // a body keeps one step (it must have one)
          const size_t end = std::min(items.size(), at + chunk);
          items.erase(items.begin() + static_cast<long>(at),
                      items.begin() + static_cast<long>(end));
          if (Try(std::move(candidate))) {
            any = true;
          } else {
            at += chunk;
          }
        }
        if (chunk == 1) break;
      }
    }
    return any;
  }

  bool RemoveDeclarations() {
    bool any = false;
    for (const char* section : {"views", "buffers"}) {
      for (size_t i = 0;; ++i) {
        YamlValue* decls = Member(doc_, section);
        if (decls == nullptr || i >= decls->members.size() || Spent()) break;
        YamlValue candidate = doc_;
        YamlValue* d = Member(candidate, section);
        d->members.erase(d->members.begin() + static_cast<long>(i));
        if (d->members.empty() && std::string(section) == "views") {
          auto& top = candidate.members;
          for (size_t k = 0; k < top.size(); ++k)
            if (top[k].key == "views") top.erase(top.begin() + static_cast<long>(k));
        }
        if (Try(std::move(candidate))) {
          any = true;
          --i;
        }
      }
    }
    return any;
  }

  bool RemoveOptionalKeys() {
    bool any = false;
    YamlValue* steps = TopSteps(doc_);
    for (size_t i = 0; steps != nullptr && i < steps->items.size() && !Spent(); ++i) {
      for (const char* key : kOptional) {
        steps = TopSteps(doc_);
        if (steps->items[i].Find(key) == nullptr) continue;
        YamlValue candidate = doc_;
        auto& members = TopSteps(candidate)->items[i].members;
        for (size_t k = 0; k < members.size(); ++k)
          if (members[k].key == key) members.erase(members.begin() + static_cast<long>(k));
        any = Try(std::move(candidate)) || any;
        steps = TopSteps(doc_);
      }
    }
    return any;
  }

  // Every size, offset and shape of the scenario halved at once, as long as the outcome holds: the
  // same scenario at half the scale (fewer pages), where halving one size alone would break the
  // others it must match (a map's size and its allocation's).
  bool HalveEverything() {
    bool any = false;
    while (!Spent()) {
      YamlValue candidate = doc_;
      bool changed = false;
      if (!HalveAll(candidate, &changed) || !changed || !Try(std::move(candidate))) break;
      any = true;
    }
    return any;
  }

  // Each dimension of each buffer's and view's shape halved (rounded up), while the outcome holds:
  // the same failure over less data. Shapes that are not plain numbers are left as they are.
  bool HalveShapes() {
    bool any = false;
    for (const char* section : {"buffers", "views"}) {
      for (size_t i = 0;; ++i) {
        YamlValue* decls = Member(doc_, section);
        if (decls == nullptr || i >= decls->members.size() || Spent()) break;
        for (size_t d = 0;; ++d) {
          const YamlValue* shape = Shape(doc_, section, i);
          if (shape == nullptr || d >= shape->items.size() || Spent()) break;
          const std::string& text = shape->items[d].scalar;
          uint64_t n = 0;
          const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
          if (error != std::errc() || end != text.data() + text.size() || n < 2) continue;
          YamlValue candidate = doc_;
          Shape(candidate, section, i)->items[d].scalar = std::to_string((n + 1) / 2);
          any = Try(std::move(candidate)) || any;
        }
      }
    }
    return any;
  }
  // The `shape` list of declaration `i` of `section`, or nullptr.
  static YamlValue* Shape(YamlValue& doc, const char* section, size_t i) {
    YamlValue* decls = Member(doc, section);
    if (decls == nullptr || i >= decls->members.size() || !decls->members[i].value.IsMap())
      return nullptr;
    YamlValue* shape = Member(decls->members[i].value, "shape");
    return shape != nullptr && !shape->IsScalar() ? shape : nullptr;
  }

  YamlValue doc_;
  const std::function<bool(const std::string&)>& keep_;
  int budget_;
  ShrinkStats* stats_;
};

// Every step, nested ones included: an isolate block, a threads group or a capture counts as one
// and so does each step of its own `steps` lists (a together group's blocks, each thread).
int CountSteps(const YamlValue& value) {
  int n = 0;
  for (const YamlMember& m : value.members) {
    if (m.key == "steps" && m.value.IsSequence()) n += static_cast<int>(m.value.items.size());
    n += CountSteps(m.value);
  }
  for (const YamlValue& item : value.items) n += CountSteps(item);
  return n;
}

}  // namespace

std::string ShrinkScenario(const std::string& text,
                           const std::function<bool(const std::string&)>& keep, int budget,
                           ShrinkStats* stats) {
  std::vector<Diagnostic> diagnostics;
  std::optional<YamlValue> doc = LoadYaml(text, "scenario.yaml", &diagnostics);
  if (!doc || !diagnostics.empty() || !doc->IsMap()) return text;
  stats->steps_before = CountSteps(*doc);
  Shrinker shrinker(std::move(*doc), keep, budget, stats);
  std::string out = shrinker.Run();
  std::vector<Diagnostic> ignored;
  if (std::optional<YamlValue> small = LoadYaml(out, "shrunk.yaml", &ignored))
    stats->steps_after = CountSteps(*small);
  return out;
}

}  // namespace vmm
