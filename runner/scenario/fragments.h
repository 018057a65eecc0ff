// Fragment files for `include:` (expander.h): loading, their shape, include cycles.
//
// A fragment file is YAML with the keys `fragment` (its name; default: the file's stem),
// `description`, `params` (a list of names, all required, or a map of name -> default, where an
// empty default means required), `include` (more fragment files, relative to this one) and
// `steps`. Files are read once per expansion, however often they are included.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/scenario/expander.h"
#include "runner/yaml/yaml_value.h"

namespace vmm {

struct FragmentParam {
  std::string name;
  int line = 0, column = 0;
  const YamlValue* default_value = nullptr;  // nullptr: the caller must give it
};

struct Fragment;
using FragmentTable = std::vector<const Fragment*>;  // the fragments one file can `use`

struct Fragment {
  std::string name;
  std::string file;  // the path it was read from (the including file's directory + the entry)
  std::vector<FragmentParam> params;
  const YamlValue* steps = nullptr;  // into `document`
  FragmentTable includes;            // what its own steps can `use`
  YamlValue document;
};

// The fragment named `name` in `table`, or nullptr.
const Fragment* FindFragment(const FragmentTable& table, const std::string& name);
// What a `use` that names no fragment of `table` is told: "unknown fragment 'x'", with the closest
// name or where fragments come from. `name` is the `use` value.
std::string UnknownFragmentMessage(const FragmentTable& table, const YamlValue& name);
// The members of a `use` step's `with` map that name no parameter of `fragment`, each with its
// message ("fragment 'f' has no parameter 'x', did you mean 'y'?").
std::vector<std::pair<const YamlMember*, std::string>> UnknownParameters(const Fragment& fragment,
                                                                         const YamlValue& with);

// Owns every fragment loaded for one expansion. Not copyable (fragments point into themselves).
class FragmentLoader {
 public:
  // `roots`: folders besides the scenario's own that includes read from disk may lie in.
  FragmentLoader(const IncludeReader& reader, const std::vector<std::string>& roots,
                 std::vector<Diagnostic>* diagnostics)
      : reader_(reader), roots_(roots), diagnostics_(diagnostics) {}
  FragmentLoader(const FragmentLoader&) = delete;
  FragmentLoader& operator=(const FragmentLoader&) = delete;

  // Loads the files listed by `include` (the value of an `include:` key written in `file`) and,
  // recursively, what they include. Problems are appended to the diagnostics; what loaded is
  // returned.
  FragmentTable Load(const YamlValue& include, const std::string& file);

 private:
  const Fragment* LoadOne(const YamlValue& entry, const std::string& path);
  // Reads an included file from disk: inside an allowed folder (real path), guarded as
  // ReadInputFile reads a scenario, UTF-8. False with *error otherwise.
  bool ReadFromDisk(const std::string& path, std::string* text, std::string* error);
  void Error(const std::string& file, const YamlValue& at, std::string message);

  const IncludeReader& reader_;
  const std::vector<std::string>& roots_;
  std::vector<std::string> real_roots_;  // the scenario's folder first; made on the first Load
  std::vector<Diagnostic>* diagnostics_;
  std::deque<Fragment> fragments_;  // stable addresses
  std::map<std::string, const Fragment*> by_path_;
  std::vector<std::string> chain_;  // files being loaded, outermost first (cycle detection)
};

}  // namespace vmm
