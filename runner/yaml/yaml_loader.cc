#include "runner/yaml/yaml_loader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <exception>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "runner/base/control_chars.h"

namespace vmm {
namespace {

// Thrown by the builder to stop yaml-cpp's parser when a limit is hit (reported before throwing).
struct LimitReached {};

// Builds YamlValue trees straight from yaml-cpp's parse events: no YAML::Node is ever made (that
// saves the node graph's allocations, a good part of YAML::Load's time) and every value keeps the
// exact mark yaml-cpp reports for it.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(const std::string& file, const YamlLoadLimits& limits,
              std::vector<Diagnostic>* diagnostics)
      : file_(file), limits_(limits), diagnostics_(diagnostics) {
    // Frames are never reallocated: pointers into them stay valid while children are built.
    frames_.reserve(static_cast<size_t>(limits_.max_depth) + 2);
  }

  // Documents seen so far, and the first one's root.
  int documents() const { return documents_; }
  int second_document_line() const { return second_line_; }
  YamlValue TakeRoot() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) second_line_ = mark.line + 1;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YamlValue* v = Place(mark);
    if (v != nullptr) Anchor(anchor, *v, 1);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) return;  // yaml-cpp reports unknown aliases itself
    Count(it->second.values, mark);
    YamlValue* v = Place(mark);
    if (v == nullptr) return;
    const int line = v->line, column = v->column;
    *v = it->second.value;
    v->line = line;  // the alias's own position, for messages
    v->column = column;
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    YamlValue* v = Place(mark);
    if (v == nullptr) return;
    v->kind = YamlValue::Kind::kScalar;
    const bool is_key = !frames_.empty() && v == &frames_.back().key;
    if (std::optional<ControlCharacter> c = FirstControlCharacter(value, !is_key)) {
      Report(v->line, v->column,
             std::string(is_key ? "the key" : "the value") + " holds the control character " +
                 DescribeControlCharacter(c->code_point) + " (scenario text may hold tabs" +
                 (is_key ? "" : " and line breaks") +
                 " but no other control characters: they would reach terminals and reports); "
                 "remove it");
    }
    v->scalar = value;
    v->quoted = tag != "?";  // "?" is a plain scalar; "!" a quoted one; others explicit tags
    Anchor(anchor, *v, 1);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, YamlValue::Kind::kSequence);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, YamlValue::Kind::kMap);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    YamlValue* value = nullptr;  // the open map or sequence
    YAML::anchor_t anchor = 0;
    size_t values_at_open = 0;
    bool have_key = false;  // maps: the key was read, its value comes next
    YamlValue key;          // maps: the pending key
    YamlValue discard;      // maps: the value of a rejected (non-scalar) key
    std::unordered_map<std::string, size_t> index;  // maps with many members: key -> member
  };
  struct Anchored {
    YamlValue value;
    size_t values = 0;
  };

  void Report(int line, int column, std::string message) {
    diagnostics_->push_back(Diagnostic{SourceLoc{file_, line, column}, std::move(message)});
  }

  void Count(size_t n, const YAML::Mark& mark) {
    values_ += n;
    if (values_ <= limits_.max_values) return;
    Report(mark.line + 1, mark.column + 1,
           "the document expands to more than " + std::to_string(limits_.max_values) +
               " values (check anchors and aliases)" + RaiseHint(Limit::kYamlValues));
    throw LimitReached{};
  }

  // Where the next value goes: the root, a list item, a map key or a map value. nullptr for the
  // documents after the first (they are only counted).
  YamlValue* Place(const YAML::Mark& mark) {
    if (documents_ > 1) return nullptr;
    Count(1, mark);
    YamlValue* v = nullptr;
    if (frames_.empty()) {
      v = &root_;
    } else {
      Frame& f = frames_.back();
      if (f.value->IsSequence()) {
        v = &f.value->items.emplace_back();
      } else if (!f.have_key) {
        f.key = YamlValue{};
        f.have_key = true;
        v = &f.key;
      } else {
        f.have_key = false;
        v = MapValue(&f);
      }
    }
    v->line = mark.line + 1;
    v->column = mark.column + 1;
    return v;
  }

  // Adds the member for the pending key of map frame `f` and returns its value slot.
  YamlValue* MapValue(Frame* f) {
    const YamlValue& key = f->key;
    if (!key.IsScalar()) {
      Report(key.line, key.column, "map keys must be plain names, got " + DescribeYamlValue(key));
      f->discard = YamlValue{};
      return &f->discard;
    }
    std::vector<YamlMember>& members = f->value->members;
    const YamlMember* first = nullptr;
    constexpr size_t kIndexFrom = 16;  // small maps (steps) are scanned
    if (members.size() < kIndexFrom) {
      for (const YamlMember& m : members)
        if (m.key == key.scalar) first = &m;
    } else {
      if (f->index.empty())
        for (size_t i = 0; i < members.size(); ++i) f->index.emplace(members[i].key, i);
      auto it = f->index.find(key.scalar);
      if (it != f->index.end()) first = &members[it->second];
    }
    if (first != nullptr) {
      Report(key.line, key.column,
             "duplicate key '" + key.scalar + "' (first at line " + std::to_string(first->line) +
                 ", column " + std::to_string(first->column) + ")");
    }
    YamlMember& m = members.emplace_back();
    m.key = key.scalar;
    m.line = key.line;
    m.column = key.column;
    if (!f->index.empty()) f->index.emplace(m.key, members.size() - 1);  // keeps the first
    return &m.value;
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, YamlValue::Kind kind) {
    YamlValue* v = Place(mark);
    if (v == nullptr) v = &ignored_;  // a later document: keep the nesting balanced
    v->kind = kind;
    if (static_cast<int>(frames_.size()) >= limits_.max_depth) {
      Report(mark.line + 1, mark.column + 1,
             "maps and lists are nested deeper than " + std::to_string(limits_.max_depth) +
                 " levels" + RaiseHint(Limit::kYamlDepth));
      throw LimitReached{};
    }
    Frame& f = frames_.emplace_back();
    f.value = v;
    f.anchor = anchor;
    f.values_at_open = values_;
  }

  void Close() {
    Frame& f = frames_.back();
    YamlValue* v = f.value;
    const YAML::anchor_t anchor = f.anchor;
    const size_t values = values_ - f.values_at_open + 1;
    frames_.pop_back();
    if (v != &ignored_) Anchor(anchor, *v, values);
    // A value written as nothing (`key:`) carries the mark of whatever came next; give it its
    // key's position instead.
    if (!frames_.empty() && frames_.back().value->IsMap()) FixNullValue(frames_.back());
  }

  void Anchor(YAML::anchor_t anchor, const YamlValue& v, size_t values) {
    if (!frames_.empty() && frames_.back().value->IsMap() && v.IsNull())
      FixNullValue(frames_.back());
    if (anchor != 0 && documents_ == 1) anchors_[anchor] = Anchored{v, values};
  }

  static void FixNullValue(Frame& f) {
    std::vector<YamlMember>& members = f.value->members;
    if (f.have_key || members.empty()) return;
    YamlMember& m = members.back();
    if (m.value.IsNull()) {
      m.value.line = m.line;
      m.value.column = m.column;
    }
  }

  const std::string& file_;
  const YamlLoadLimits& limits_;
  std::vector<Diagnostic>* diagnostics_;
  std::vector<Frame> frames_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  YamlValue root_;
  YamlValue ignored_;
  size_t values_ = 0;
  int documents_ = 0;
  int second_line_ = 0;
};

}  // namespace

bool IsBlankYaml(const std::string& text) {
  bool in_comment = false;
  for (char c : text) {
    if (c == '\n') {
      in_comment = false;
    } else if (!in_comment) {
      if (c == '#') {
        in_comment = true;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return false;
      }
    }
  }
  return true;
}

std::optional<YamlValue> LoadYaml(const std::string& text, const std::string& file,
                                  std::vector<Diagnostic>* diagnostics,
                                  const YamlLoadLimits& limits) {
  TreeBuilder builder(file, limits, diagnostics);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (builder.documents() < 2 && parser.HandleNextDocument(builder)) {
    }
  } catch (const LimitReached&) {
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    SourceLoc loc{file, 0, 0};
    if (!e.mark.is_null()) loc = SourceLoc{file, e.mark.line + 1, e.mark.column + 1};
    diagnostics->push_back(Diagnostic{loc, "invalid YAML: " + e.msg});
    return std::nullopt;
  } catch (const std::exception& e) {
    diagnostics->push_back(
        Diagnostic{SourceLoc{file, 0, 0}, std::string("invalid YAML: ") + e.what()});
    return std::nullopt;
  }
  if (builder.documents() > 1) {
    diagnostics->push_back(Diagnostic{SourceLoc{file, builder.second_document_line(), 1},
                                      "the file holds more than one YAML document; expected one"});
    return std::nullopt;
  }
  return builder.TakeRoot();
}

}  // namespace vmm
