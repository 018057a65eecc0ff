#include "runner/yaml/valijson_oracle.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <valijson/adapters/yaml_cpp_adapter.hpp>

// valijson 1.0's uniqueItems check pre-decrements an array iterator; the yaml-cpp adapter's is
// forward-only, so the validator would not compile (fixed upstream in valijson PR #175, which stops
// decrementing). This overload makes it compile; it is never called because ValijsonOracle::Create
// refuses schemas that use uniqueItems.
namespace valijson::adapters {
[[maybe_unused]] inline YamlCppArrayValueIterator operator--(YamlCppArrayValueIterator) {
  throw std::logic_error("uniqueItems is not supported over the yaml-cpp adapter");
}
}  // namespace valijson::adapters

#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace vmm {

struct ValijsonOracle::Impl {
  YAML::Node schema_document;
  valijson::Schema schema;
};

ValijsonOracle::ValijsonOracle(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ValijsonOracle::ValijsonOracle(ValijsonOracle&&) noexcept = default;
ValijsonOracle& ValijsonOracle::operator=(ValijsonOracle&&) noexcept = default;
ValijsonOracle::~ValijsonOracle() = default;

StatusOr<ValijsonOracle> ValijsonOracle::Create(const std::string& schema_json) {
  if (schema_json.find("\"uniqueItems\"") != std::string::npos)
    return InvalidInput("schema uses uniqueItems, which valijson cannot check over yaml-cpp");
  auto impl = std::make_unique<Impl>();
  try {
    impl->schema_document = YAML::Load(schema_json);
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::YamlCppAdapter adapter(impl->schema_document);
    parser.populateSchema(adapter, impl->schema);
  } catch (const std::exception& e) {
    return InvalidInput(std::string("valijson cannot parse the schema: ") + e.what());
  }
  return ValijsonOracle(std::move(impl));
}

namespace {

// The position of the node a valijson context path (<root> [steps] [3] [size]) names, from
// context[i] on, or of the deepest existing ancestor. (Recursion instead of Node assignment:
// assigning a yaml-cpp Node rebinds the node it refers to, which would edit the document.)
YAML::Mark MarkAt(const YAML::Node& node, const std::vector<std::string>& context, size_t i) {
  if (i >= context.size()) return node.Mark();
  const std::string& token = context[i];
  if (token.size() < 2 || token.front() != '[' || token.back() != ']') return node.Mark();
  const std::string key = token.substr(1, token.size() - 2);
  if (node.IsSequence()) {
    size_t index = 0;
    for (const YAML::Node& item : node) {
      if (std::to_string(index++) == key) return MarkAt(item, context, i + 1);
    }
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key)
        return MarkAt(entry.second, context, i + 1);
    }
  }
  return node.Mark();
}

std::string LowerFirst(std::string s) {
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::vector<Diagnostic> ValijsonOracle::Validate(const std::string& text,
                                                 const std::string& file) const {
  std::vector<Diagnostic> out;
  try {
    const YAML::Node document = YAML::Load(text);
    valijson::Validator validator(valijson::Validator::kWeakTypes);
    valijson::ValidationResults results;
    valijson::adapters::YamlCppAdapter adapter(document);
    if (validator.validate(impl_->schema, adapter, &results)) return out;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
      const YAML::Mark mark = MarkAt(document, error.context, 1);  // [0] is "<root>"
      SourceLoc loc{file, 0, 0};
      if (!mark.is_null()) loc = SourceLoc{file, mark.line + 1, mark.column + 1};
      out.push_back(Diagnostic{loc, LowerFirst(error.description)});
    }
  } catch (const YAML::Exception& e) {
    out.push_back(
        Diagnostic{SourceLoc{file, e.mark.line + 1, e.mark.column + 1}, "invalid YAML: " + e.msg});
  } catch (const std::exception& e) {
    out.push_back(Diagnostic{SourceLoc{file, 0, 0}, std::string("valijson: ") + e.what()});
  }
  return out;
}

}  // namespace vmm
