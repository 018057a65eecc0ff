#include "runner/scenario/fragments.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/base/input_file.h"
#include "runner/base/limits.h"
#include "runner/base/utf8.h"
#include "runner/yaml/yaml_loader.h"

namespace vmm {
namespace {

constexpr const char* kFragmentKeys[] = {"fragment", "description", "params", "include", "steps"};

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : separator) + parts[i];
  return out;
}

}  // namespace

const Fragment* FindFragment(const FragmentTable& table, const std::string& name) {
  for (const Fragment* f : table)
    if (f->name == name) return f;
  return nullptr;
}

std::string UnknownFragmentMessage(const FragmentTable& table, const YamlValue& name) {
  std::vector<std::string> names;
  for (const Fragment* g : table) names.push_back(g->name);
  const std::string close = name.IsScalar() ? SuggestName(name.scalar, names) : "";
  return "unknown fragment " + DescribeYamlValue(name) +
         (!close.empty() ? ", did you mean '" + close + "'?"
                         : "; name a fragment of a file listed under 'include:'");
}

std::vector<std::pair<const YamlMember*, std::string>> UnknownParameters(const Fragment& fragment,
                                                                         const YamlValue& with) {
  std::vector<std::string> names;
  for (const FragmentParam& p : fragment.params) names.push_back(p.name);
  std::vector<std::pair<const YamlMember*, std::string>> out;
  for (const YamlMember& m : with.members) {
    if (std::find(names.begin(), names.end(), m.key) != names.end()) continue;
    const std::string close = SuggestName(m.key, names);
    out.emplace_back(&m, "fragment '" + fragment.name + "' has no parameter '" + m.key + "'" +
                             (close.empty() ? std::string() : ", did you mean '" + close + "'?"));
  }
  return out;
}

void FragmentLoader::Error(const std::string& file, const YamlValue& at, std::string message) {
  diagnostics_->push_back(Diagnostic{LocationOf(file, at), std::move(message)});
}

FragmentTable FragmentLoader::Load(const YamlValue& include, const std::string& file) {
  FragmentTable table;
  if (!include.IsSequence()) {
    Error(file, include,
          "'include' must be a list of fragment files, got " + DescribeYamlValue(include));
    return table;
  }
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(file).parent_path();
  if (real_roots_.empty()) {  // the top-level scenario's folder, then the --include-root ones
    std::error_code ec;
    real_roots_.push_back(fs::weakly_canonical(dir.empty() ? fs::path(".") : dir, ec).string());
    for (const std::string& r : roots_) real_roots_.push_back(fs::weakly_canonical(r, ec).string());
  }
  if (chain_.size() >= LimitValue(Limit::kIncludeDepth)) {
    Error(file, include,
          "includes nest deeper than " + std::to_string(LimitValue(Limit::kIncludeDepth)) +
              " files" + RaiseHint(Limit::kIncludeDepth) + ": " + Join(chain_, " -> "));
    return table;
  }
  chain_.push_back(file);
  for (const YamlValue& entry : include.items) {
    if (!entry.IsScalar() || entry.scalar.empty()) {
      Error(file, entry, "an include entry must be a file path, got " + DescribeYamlValue(entry));
      continue;
    }
    std::string path = (dir / entry.scalar).lexically_normal().string();
    if (!reader_) {  // one file has one name however it is reached (symlinks, "./")
      std::error_code ec;
      const fs::path real = fs::weakly_canonical(path, ec);
      if (!ec) path = real.string();
    }
    if (std::find(chain_.begin(), chain_.end(), path) != chain_.end()) {
      std::vector<std::string> cycle(std::find(chain_.begin(), chain_.end(), path), chain_.end());
      cycle.push_back(path);
      Error(file, entry, "include cycle: " + Join(cycle, " -> "));
      continue;
    }
    const Fragment* f = nullptr;
    if (auto it = by_path_.find(path); it != by_path_.end()) {
      f = it->second;
    } else {
      f = LoadOne(entry, path);
    }
    if (f == nullptr) continue;
    if (const Fragment* same = FindFragment(table, f->name); same != nullptr) {
      if (same != f)
        Error(file, entry,
              "fragment '" + f->name + "' is defined twice: in " + same->file + " and " + f->file);
      continue;
    }
    table.push_back(f);
  }
  chain_.pop_back();
  return table;
}

bool FragmentLoader::ReadFromDisk(const std::string& path, std::string* text, std::string* error) {
  bool inside = false;
  for (const std::string& root : real_roots_) {
    const std::string prefix = root.empty() || root.back() == '/' ? root : root + "/";
    inside = inside || path.rfind(prefix, 0) == 0;
  }
  if (!inside) {
    *error = "it lies outside the scenario's folder '" + real_roots_.front() +
             "'; a scenario reads only files in its own folder (give another with --include-root)";
    return false;
  }
  StatusOr<std::string> read = ReadInputFile(path, Limit::kInputBytes);
  if (!read.ok()) {
    *error = read.status().message();
    return false;
  }
  if (std::optional<size_t> bad = FirstInvalidUtf8(*read)) {
    const TextPosition at = PositionOfOffset(*read, *bad);
    *error = "it is not valid UTF-8 (line " + std::to_string(at.line) + ", column " +
             std::to_string(at.column) + ")";
    return false;
  }
  *text = std::move(read).value();
  return true;
}

const Fragment* FragmentLoader::LoadOne(const YamlValue& entry, const std::string& path) {
  const std::string& from = chain_.back();
  if (fragments_.size() >= LimitValue(Limit::kIncludeFiles)) {
    Error(from, entry,
          "more than " + std::to_string(LimitValue(Limit::kIncludeFiles)) +
              " fragment files in one scenario" + RaiseHint(Limit::kIncludeFiles));
    return nullptr;
  }
  std::string text, reason;
  const bool read = reader_ ? reader_(path, &text, &reason) : ReadFromDisk(path, &text, &reason);
  if (!read) {
    // The reason only: nothing of a file's contents reaches a message.
    Error(from, entry,
          "cannot read included file '" + entry.scalar + "' (" + path + "): " + reason);
    return nullptr;
  }
  const size_t errors = diagnostics_->size();
  std::optional<YamlValue> doc = LoadYaml(text, path, diagnostics_);
  if (!doc) return nullptr;
  Fragment& f = fragments_.emplace_back();
  by_path_[path] = &f;
  f.file = path;
  f.document = std::move(*doc);
  f.name = std::filesystem::path(path).stem().string();
  const YamlValue& root = f.document;
  if (!root.IsMap()) {
    diagnostics_->push_back(
        Diagnostic{SourceLoc{path, std::max(root.line, 1), std::max(root.column, 1)},
                   "a fragment file must be a map with 'steps', got " + DescribeYamlValue(root)});
    return nullptr;
  }
  for (const YamlMember& m : root.members) {
    if (std::find_if(std::begin(kFragmentKeys), std::end(kFragmentKeys),
                     [&](const char* k) { return m.key == k; }) == std::end(kFragmentKeys)) {
      const std::string close = SuggestName(
          m.key, std::vector<std::string>(std::begin(kFragmentKeys), std::end(kFragmentKeys)));
      diagnostics_->push_back(Diagnostic{
          SourceLoc{path, m.line, m.column},
          "unknown key '" + m.key + "' in a fragment file" +
              (close.empty()
                   ? "; expected 'fragment', 'description', 'params', 'include' or 'steps'"
                   : ", did you mean '" + close + "'?")});
    }
  }
  if (const YamlValue* name = root.Find("fragment")) {
    if (!name->IsScalar() || name->scalar.empty())
      Error(path, *name, "'fragment' must be a name, got " + DescribeYamlValue(*name));
    else
      f.name = name->scalar;
  }
  if (const YamlValue* params = root.Find("params")) {
    auto add = [&](const std::string& name, int line, int column, const YamlValue* def) {
      if (!IsVariableName(name)) {
        diagnostics_->push_back(
            Diagnostic{SourceLoc{path, line, column},
                       "parameter name '" + name + "' is not a name; use letters, digits and '_'"});
        return;
      }
      f.params.push_back(FragmentParam{name, line, column, def});
    };
    if (params->IsSequence()) {
      for (const YamlValue& p : params->items) {
        if (p.IsScalar())
          add(p.scalar, p.line, p.column, nullptr);
        else
          Error(path, p, "a parameter must be a name, got " + DescribeYamlValue(p));
      }
    } else if (params->IsMap()) {
      for (const YamlMember& m : params->members) {
        if (!m.value.IsNull() && !m.value.IsScalar()) {
          Error(path, m.value,
                "the default of parameter '" + m.key + "' must be a value, got " +
                    DescribeYamlValue(m.value));
          continue;
        }
        add(m.key, m.line, m.column, m.value.IsNull() ? nullptr : &m.value);
      }
    } else if (!params->IsNull()) {
      Error(path, *params,
            "'params' must be a list of names or a map of name: default, got " +
                DescribeYamlValue(*params));
    }
  }
  f.steps = root.Find("steps");
  if (f.steps == nullptr) {
    diagnostics_->push_back(
        Diagnostic{SourceLoc{path, root.line, root.column}, "the fragment file needs key 'steps'"});
  } else if (!f.steps->IsSequence()) {
    Error(path, *f.steps, "'steps' must be a list of steps, got " + DescribeYamlValue(*f.steps));
    f.steps = nullptr;
  }
  if (const YamlValue* include = root.Find("include")) f.includes = Load(*include, path);
  if (diagnostics_->size() != errors) return nullptr;
  return &f;
}

}  // namespace vmm
