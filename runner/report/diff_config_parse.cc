#include "runner/report/diff_config_parse.h"

#include "runner/base/input_file.h"
#include "runner/yaml/json_schema.h"
#include "runner/yaml/schema_validator.h"
#include "runner/yaml/yaml_loader.h"

namespace vmm::embedded {
extern const char* const kDiffConfigSchema;
}  // namespace vmm::embedded

namespace vmm {
namespace {

// Applies the keys present in `map` (already schema-valid) on top of *t.
void ApplyThreshold(const YamlValue& map, report::TimingThreshold* t) {
  if (const YamlValue* v = map.Find("enabled")) YamlIsBoolean(*v, &t->enabled);
  if (const YamlValue* v = map.Find("single_runs")) YamlIsBoolean(*v, &t->single_runs);
  if (const YamlValue* v = map.Find("relative")) YamlIsNumber(*v, &t->relative);
  if (const YamlValue* v = map.Find("floor_us")) YamlIsNumber(*v, &t->floor_us);
  if (const YamlValue* v = map.Find("spread_factor")) YamlIsNumber(*v, &t->spread_factor);
}

report::DiffConfig Build(const YamlValue& root) {
  report::DiffConfig config;
  if (const YamlValue* v = root.Find("ignore_device")) YamlIsBoolean(*v, &config.ignore_device);
  const YamlValue* timing = root.Find("timing");
  if (timing == nullptr || !timing->IsMap()) return config;
  ApplyThreshold(*timing, &config.timing);
  if (const YamlValue* metrics = timing->Find("metrics"); metrics && metrics->IsMap()) {
    for (const YamlMember& m : metrics->members) {
      report::TimingThreshold t = config.timing;  // overrides inherit the file's `timing`
      if (m.value.IsMap()) ApplyThreshold(m.value, &t);
      config.metrics[m.key] = t;
    }
  }
  return config;
}

}  // namespace

const char* DiffConfigSchemaText() { return embedded::kDiffConfigSchema; }

std::optional<report::DiffConfig> ParseDiffConfig(const std::string& text, const std::string& file,
                                                  std::vector<Diagnostic>* diagnostics) {
  const size_t before = diagnostics->size();
  std::optional<YamlValue> root = LoadYaml(text, file, diagnostics);
  if (!root) return std::nullopt;
  if (root->IsNull()) {
    if (diagnostics->size() != before) return std::nullopt;
    return report::DiffConfig{};  // an empty file: every default
  }
  // Compiled per call: a config is parsed once per process.
  StatusOr<SchemaValidator> validator = SchemaValidator::Create(DiffConfigSchemaText());
  if (!validator.ok()) {
    diagnostics->push_back(
        Diagnostic{SourceLoc{file, 0, 0},
                   "internal error: embedded diff-config schema: " + validator.status().message()});
    return std::nullopt;
  }
  validator->Validate(*root, file, diagnostics);
  if (diagnostics->size() != before) return std::nullopt;
  return Build(*root);
}

std::optional<report::DiffConfig> LoadDiffConfigFile(const std::string& path,
                                                     std::vector<Diagnostic>* diagnostics) {
  StatusOr<std::string> text = ReadInputFile(path, Limit::kInputBytes);
  if (!text.ok()) {
    diagnostics->push_back(Diagnostic{SourceLoc{path, 0, 0}, text.status().message()});
    return std::nullopt;
  }
  return ParseDiffConfig(*text, path, diagnostics);
}

}  // namespace vmm
