#include "runner/scenario/yaml_loader.h"

#include <yaml-cpp/yaml.h>

#include <exception>
#include <unordered_map>

namespace vmm {
namespace {

// Converts yaml-cpp nodes into YamlValue, checking keys as it goes.
class Converter {
 public:
  Converter(const std::string& file, const YamlLoadLimits& limits,
            std::vector<Diagnostic>* diagnostics)
      : file_(file), limits_(limits), diagnostics_(diagnostics) {}

  // False when a limit was hit (the partial tree must not be used).
  bool Convert(const YAML::Node& node, int depth, int fallback_line, int fallback_column,
               YamlValue* out) {
    if (++values_ > limits_.max_values) {
      if (!limit_reported_) {
        Report(fallback_line, fallback_column,
               "the document expands to more than " + std::to_string(limits_.max_values) +
                   " values (check anchors and aliases)");
      }
      limit_reported_ = true;
      return false;
    }
    if (depth > limits_.max_depth) {
      if (!limit_reported_) {
        Report(fallback_line, fallback_column,
               "maps and lists are nested deeper than " + std::to_string(limits_.max_depth) +
                   " levels");
      }
      limit_reported_ = true;
      return false;
    }
    const YAML::Mark mark = node.Mark();
    out->line = mark.is_null() ? fallback_line : mark.line + 1;
    out->column = mark.is_null() ? fallback_column : mark.column + 1;
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out->kind = YamlValue::Kind::kNull;
        return true;
      case YAML::NodeType::Scalar:
        out->kind = YamlValue::Kind::kScalar;
        out->scalar = node.Scalar();
        out->quoted = node.Tag() == "!";
        return true;
      case YAML::NodeType::Sequence:
        out->kind = YamlValue::Kind::kSequence;
        out->items.reserve(node.size());
        for (const YAML::Node& item : node) {
          if (!Convert(item, depth + 1, out->line, out->column, &out->items.emplace_back()))
            return false;
        }
        return true;
      case YAML::NodeType::Map:
        out->kind = YamlValue::Kind::kMap;
        return ConvertMap(node, depth, out);
    }
    return true;
  }

 private:
  bool ConvertMap(const YAML::Node& node, int depth, YamlValue* out) {
    out->members.reserve(node.size());
    // Small maps (steps) compare keys pairwise; large ones (many buffers) use an index.
    std::unordered_map<std::string, size_t> index;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      const YAML::Mark key_mark = key.Mark();
      const int key_line = key_mark.is_null() ? out->line : key_mark.line + 1;
      const int key_column = key_mark.is_null() ? out->column : key_mark.column + 1;
      if (!key.IsScalar()) {
        Report(
            key_line, key_column,
            std::string("map keys must be plain names, got ") + (key.IsMap()        ? "a map"
                                                                 : key.IsSequence() ? "a list"
                                                                                    : "nothing"));
        continue;
      }
      const std::string& name = key.Scalar();
      const YamlMember* first = FindMember(out->members, name, &index);
      if (first != nullptr) {
        Report(key_line, key_column,
               "duplicate key '" + name + "' (first at line " + std::to_string(first->line) +
                   ", column " + std::to_string(first->column) + ")");
      }
      YamlMember& member = out->members.emplace_back();
      member.key = name;
      member.line = key_line;
      member.column = key_column;
      if (!index.empty()) index.emplace(name, out->members.size() - 1);  // keeps the first
      // Values written as nothing (`key:`) carry no mark: point at the key instead.
      if (!Convert(entry.second, depth + 1, key_line, key_column, &member.value)) return false;
      if (member.value.IsNull()) {
        // yaml-cpp marks an empty value where parsing stopped (often the next line).
        member.value.line = key_line;
        member.value.column = key_column;
      }
    }
    return true;
  }

  // The first member named `name`. Small maps (steps) are scanned; from kIndexFrom members on
  // (e.g. many buffers) a name index is built once and then kept up to date by the caller.
  static const YamlMember* FindMember(const std::vector<YamlMember>& members,
                                      const std::string& name,
                                      std::unordered_map<std::string, size_t>* index) {
    constexpr size_t kIndexFrom = 16;
    if (members.size() < kIndexFrom) {
      for (const YamlMember& m : members)
        if (m.key == name) return &m;
      return nullptr;
    }
    if (index->empty())
      for (size_t i = 0; i < members.size(); ++i) index->emplace(members[i].key, i);
    auto found = index->find(name);
    return found == index->end() ? nullptr : &members[found->second];
  }

  void Report(int line, int column, std::string message) {
    diagnostics_->push_back(Diagnostic{SourceLoc{file_, line, column}, std::move(message)});
  }

  const std::string& file_;
  const YamlLoadLimits& limits_;
  std::vector<Diagnostic>* diagnostics_;
  size_t values_ = 0;
  bool limit_reported_ = false;
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
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
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
  if (documents.empty()) return YamlValue{};
  if (documents.size() > 1) {
    const YAML::Mark mark = documents[1].Mark();
    SourceLoc loc{file, 0, 0};
    if (!mark.is_null()) loc = SourceLoc{file, mark.line + 1, mark.column + 1};
    diagnostics->push_back(Diagnostic{loc, "the file holds " + std::to_string(documents.size()) +
                                               " YAML documents; expected one"});
    return std::nullopt;
  }
  YamlValue root;
  try {
    Converter converter(file, limits, diagnostics);
    if (!converter.Convert(documents[0], 0, 1, 1, &root)) return std::nullopt;
  } catch (const std::exception& e) {
    diagnostics->push_back(
        Diagnostic{SourceLoc{file, 0, 0}, std::string("invalid YAML: ") + e.what()});
    return std::nullopt;
  }
  return root;
}

}  // namespace vmm
