#include "runner/scenario/parse.h"

#include <cstdio>
#include <mutex>

#include "runner/base/diagnostic.h"
#include "runner/base/input_file.h"
#include "runner/base/utf8.h"
#include "runner/scenario/scenario_builder.h"
#include "runner/scenario/size.h"
#include "runner/scenario/step_docs.h"
#include "runner/yaml/schema_validator.h"
#include "runner/yaml/yaml_loader.h"

namespace vmm::embedded {
extern const char* const kScenarioSchema;
}  // namespace vmm::embedded

namespace vmm {
namespace {

// The process-wide parser behind ParseScenario: built on first use under std::call_once and
// never destroyed before exit. (Namespace scope on purpose: no function-local statics.)
std::once_flag g_shared_once;
std::unique_ptr<ScenarioParser> g_shared_parser;
Status g_shared_status;

const ScenarioParser* SharedParser(Status* status) {
  std::call_once(g_shared_once, [] {
    StatusOr<ScenarioParser> parser = ScenarioParser::Create();
    if (parser.ok()) {
      g_shared_parser = std::make_unique<ScenarioParser>(std::move(parser).value());
    } else {
      g_shared_status = parser.status();
    }
  });
  *status = g_shared_status;
  return g_shared_parser.get();
}

std::string SuggestForTitle(const std::string& title, const std::string& value) {
  return title == "size" ? SuggestSize(value) : std::string();
}

// The expanded top-level steps, validated and built as they come and then dropped: a loop of
// 80,000 steps is never whole in memory as YAML. Validation goes on past a bad step (every
// mistake is reported); building stops at the first.
class ValidateAndBuildSteps final : public ExpandedStepSink {
 public:
  ValidateAndBuildSteps(const SchemaValidator& validator, const std::string& file)
      : validator_(validator), file_(file), builder_(validator.schema(), file, &built_) {}

  void Expect(size_t steps) override { builder_.Reserve(steps); }
  void Take(YamlValue&& step) override {
    const bool valid = validator_.ValidateListItem(step, "steps", index_++, file_, &found_);
    clean_ = clean_ && valid;
    if (clean_) builder_.Add(step);
  }

  // The validator's diagnostics for the steps taken.
  std::vector<Diagnostic>& found() { return found_; }
  // The scenario: `document` (the expansion, its streamed list empty) built after the steps.
  // Its diagnostics go to *diagnostics.
  std::optional<Scenario> Finish(const YamlValue& document, std::vector<Diagnostic>* diagnostics) {
    std::optional<Scenario> scenario = builder_.Finish(document);
    diagnostics->insert(diagnostics->end(), built_.begin(), built_.end());
    return scenario;
  }

 private:
  const SchemaValidator& validator_;
  const std::string& file_;
  std::vector<Diagnostic> found_;
  std::vector<Diagnostic> built_;
  StepwiseScenarioBuilder builder_;
  size_t index_ = 0;
  bool clean_ = true;
};

}  // namespace

const char* ScenarioSchemaText() { return embedded::kScenarioSchema; }

StatusOr<ScenarioParser> ScenarioParser::Create() {
  SchemaValidatorOptions options;
  options.suggest = SuggestForTitle;
  StatusOr<SchemaValidator> validator = SchemaValidator::Create(ScenarioSchemaText(), options);
  if (!validator.ok()) return validator.status().WithContext("embedded scenario schema");
  return ScenarioParser(std::make_unique<SchemaValidator>(std::move(validator).value()));
}

ScenarioParser::ScenarioParser(std::unique_ptr<SchemaValidator> validator)
    : validator_(std::move(validator)) {}
ScenarioParser::ScenarioParser(ScenarioParser&&) noexcept = default;
ScenarioParser& ScenarioParser::operator=(ScenarioParser&&) noexcept = default;
ScenarioParser::~ScenarioParser() = default;

std::optional<Scenario> ScenarioParser::Parse(const std::string& text, const std::string& file,
                                              const ExpandOptions& options,
                                              std::vector<Diagnostic>* diagnostics,
                                              Expansion* expanded, PartialScenario* partial) const {
  if (IsBlankYaml(text)) {
    diagnostics->push_back(Diagnostic{
        SourceLoc{file, 1, 1}, "the file is empty; a scenario needs at least 'name' and 'steps'"});
    return std::nullopt;
  }
  if (std::optional<size_t> bad = FirstInvalidUtf8(text)) {
    const TextPosition at = PositionOfOffset(text, *bad);
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[*bad]));
    diagnostics->push_back(Diagnostic{SourceLoc{file, at.line, at.column},
                                      std::string("the file is not valid UTF-8 (byte ") + byte +
                                          "); save the scenario as UTF-8"});
    return std::nullopt;
  }
  std::vector<Diagnostic> found;
  std::optional<YamlValue> document = LoadYaml(text, file, &found);
  // The source form is expanded only when it uses vars, loops, includes or ${...}: a plain
  // scenario is validated as loaded, with no copy. Unless the caller keeps the expanded document,
  // its top-level steps stream (ValidateAndBuildSteps).
  const YamlValue* doc = document ? &*document : nullptr;
  std::optional<Expansion> expansion;
  std::optional<ValidateAndBuildSteps> streamed;
  if (doc != nullptr && NeedsExpansion(text, *doc, options)) {
    if (expanded == nullptr) streamed.emplace(*validator_, file);
    const size_t loaded = found.size();
    expansion = ExpandScenario(*doc, file, options, &found, streamed ? &*streamed : nullptr);
    if (!expansion && streamed && !streamed->found().empty()) {
      // The steps streamed before the expansion failed spent the suggestion budget on their own
      // mistakes, which are not reported: expand again, as without streaming, for the messages.
      found.resize(loaded);
      streamed.reset();
      ResetSuggestionBudget();
      expansion = ExpandScenario(*doc, file, options, &found);
    }
    doc = expansion ? &expansion->document : nullptr;
  }
  if (doc != nullptr) {
    validator_->Validate(*doc, file, &found);
    if (streamed)  // a failed expansion's steps are not validated, as without streaming
      found.insert(found.end(), streamed->found().begin(), streamed->found().end());
  }
  CollapseRepeats(&found);
  SortByPosition(&found);
  const bool clean = doc != nullptr && found.empty();
  diagnostics->insert(diagnostics->end(), found.begin(), found.end());
  if (!clean) {
    if (partial != nullptr && document && !expansion && !found.empty())
      SetAsideBadSteps(*document, file, found, *validator_, partial);
    return std::nullopt;
  }
  // Unless the caller keeps the expanded document, the builder consumes it step by step.
  YamlValue* own = expanded != nullptr ? nullptr : expansion ? &expansion->document : &*document;
  std::optional<Scenario> scenario =
      streamed         ? streamed->Finish(*doc, diagnostics)
      : own != nullptr ? BuildScenario(std::move(*own), validator_->schema(), file, diagnostics)
                       : BuildScenario(*doc, validator_->schema(), file, diagnostics);
  if (scenario && expansion)
    for (const auto& [name, value] : expansion->vars)
      scenario->vars.emplace_back(name, value.ToString());
  if (expanded != nullptr) {
    if (expansion) {
      *expanded = std::move(*expansion);
    } else {
      expanded->document = std::move(*document);
    }
  }
  return scenario;
}

std::optional<Scenario> ParseScenario(const std::string& text, const std::string& file,
                                      std::vector<Diagnostic>* diagnostics) {
  return ParseScenario(text, file, ExpandOptions{}, diagnostics);
}

std::optional<Scenario> ParseScenario(const std::string& text, const std::string& file,
                                      const ExpandOptions& options,
                                      std::vector<Diagnostic>* diagnostics, Expansion* expanded,
                                      PartialScenario* partial) {
  ResetSuggestionBudget();
  Status status;
  const ScenarioParser* parser = SharedParser(&status);
  if (parser == nullptr) {
    diagnostics->push_back(
        Diagnostic{SourceLoc{file, 0, 0}, "internal error: " + status.message()});
    return std::nullopt;
  }
  return parser->Parse(text, file, options, diagnostics, expanded, partial);
}

std::optional<Scenario> LoadScenarioFile(const std::string& path,
                                         std::vector<Diagnostic>* diagnostics) {
  return LoadScenarioFile(path, ExpandOptions{}, diagnostics);
}

std::optional<Scenario> LoadScenarioFile(const std::string& path, const ExpandOptions& options,
                                         std::vector<Diagnostic>* diagnostics,
                                         Expansion* expanded) {
  StatusOr<std::string> text = ReadInputFile(path, Limit::kInputBytes);
  if (!text.ok()) {
    diagnostics->push_back(Diagnostic{SourceLoc{path, 0, 0}, text.status().message()});
    return std::nullopt;
  }
  return ParseScenario(*text, path, options, diagnostics, expanded);
}

std::optional<std::vector<SweepPoint>> ReadSweepPoints(const std::string& text,
                                                       const std::string& file,
                                                       const std::vector<VarOverride>& set,
                                                       std::vector<Diagnostic>* diagnostics) {
  if (text.find("sweep") == std::string::npos) return std::vector<SweepPoint>{};
  std::vector<Diagnostic> ignored;
  std::optional<YamlValue> document = LoadYaml(text, file, &ignored);
  if (!document) return std::vector<SweepPoint>{};
  return SweepPoints(*document, file, set, diagnostics);
}

std::string DescribeSteps() {
  Status status;
  const ScenarioParser* parser = SharedParser(&status);
  if (parser == nullptr) return "internal error: " + status.message() + "\n";
  return DescribeStepsFromSchema(parser->validator().schema());
}

std::string DescribeStep(const std::string& op, std::string* error) {
  Status status;
  const ScenarioParser* parser = SharedParser(&status);
  if (parser == nullptr) {
    *error = "internal error: " + status.message();
    return "";
  }
  return DescribeStepFromSchema(parser->validator().schema(), op, error);
}

}  // namespace vmm
