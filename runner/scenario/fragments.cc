#include "runner/scenario/fragments.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/yaml/yaml_loader.h"

namespace vmm {
namespace {

constexpr const char* kFragmentKeys[] = {"fragment", "description", "params", "include", "steps"};

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : separator) + parts[i];
  return out;
}

bool ReadWholeFile(const std::string& path, std::string* text, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "it is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = std::strerror(errno);
    return false;
  }
  std::ostringstream out;
  out << in.rdbuf();
  *text = out.str();
  if (in.bad()) *error = "read error";
  return !in.bad();
}

}  // namespace

const Fragment* FindFragment(const FragmentTable& table, const std::string& name) {
  for (const Fragment* f : table)
    if (f->name == name) return f;
  return nullptr;
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
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  chain_.push_back(file);
  for (const YamlValue& entry : include.items) {
    if (!entry.IsScalar() || entry.scalar.empty()) {
      Error(file, entry, "an include entry must be a file path, got " + DescribeYamlValue(entry));
      continue;
    }
    const std::string path = (dir / entry.scalar).lexically_normal().string();
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

const Fragment* FragmentLoader::LoadOne(const YamlValue& entry, const std::string& path) {
  const std::string& from = chain_.back();
  std::string text, reason;
  const bool read = reader_ ? reader_(path, &text, &reason) : ReadWholeFile(path, &text, &reason);
  if (!read) {
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
