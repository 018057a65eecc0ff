#include "runner/report/report_test_util.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "runner/base/format.h"

namespace vmm::report::testutil {
namespace {

StepRecord Step(int index, std::string op, std::string name, bool named, int line, double wall_us) {
  StepRecord s;
  s.index = index;
  s.op = std::move(op);
  s.name = named ? std::move(name) : s.op + " #" + std::to_string(index);
  s.named = named;
  s.line = line;
  s.wall_us = wall_us;
  return s;
}

CheckRecord Check(std::string expected, std::string actual, Verdict verdict) {
  CheckRecord c;
  c.expected = std::move(expected);
  c.actual = std::move(actual);
  c.verdict = verdict;
  return c;
}

}  // namespace

Report SampleReport() {
  Report r;
  r.tool_version = "0.1.0";
  r.git_sha = "0123456789abcdef0123456789abcdef01234567";
  r.argv = {"vmm-run", "run", "scenarios/graph_update.yaml", "--backend", "host"};
  r.scenario_path = "scenarios/graph_update.yaml";
  r.scenario_sha256 = std::string(64, 'a');
  r.scenario_name = "graph_update";
  r.backend = "host";
  r.backend_reason = "requested with --backend host";
  r.device.name = "host (x86_64, Linux 6.1)";
  r.device.driver_version = "6.1.0";
  r.device.vmm_supported = true;
  r.device.granularity_min = 2 << 20;
  r.device.granularity_recommended = 2 << 20;
  r.device.total_memory = 137438953472ull;
  r.granularity = 2 << 20;
  r.started_at = "2025-01-02T03:04:05Z";

  StepRecord reserve = Step(0, "reserve", "", false, 19, 3.25);
  reserve.addresses = {{"va", std::string("0x7f3a00000000")}};
  reserve.details = {{"size", int64_t{2097152}}};
  r.steps.push_back(reserve);

  StepRecord map1 = Step(1, "map", "map A (first)", true, 25, 1.5);
  map1.addresses = {{"va", std::string("0x7f3a00000000")}};
  map1.details = {{"size", int64_t{2097152}}, {"offset", int64_t{0}}};
  r.steps.push_back(map1);

  StepRecord capture = Step(2, "capture", "", false, 35, 40.0);
  StepRecord inner = Step(0, "matmul", "", false, 38, 0.0);
  inner.details = {{"m", int64_t{256}}, {"n", int64_t{256}}, {"k", int64_t{256}}};
  capture.body.push_back(inner);
  r.steps.push_back(capture);

  StepRecord replay = Step(3, "replay", "replay g1", true, 40, 16.2);
  replay.gpu_us = 15.75;
  replay.wall_stats = TimingStats{20, 15.5, 16.2, 19.0, 21.5};
  replay.gpu_stats = TimingStats{20, 15.0, 15.75, 17.25, 18.0};
  r.steps.push_back(replay);

  StepRecord check_mm = Step(4, "check_matmul", "replay computes A·B", true, 41, 812.5);
  check_mm.check = Check("pass", "pass", Verdict::kPass);
  check_mm.details = {
      {"c_hash", std::string("0x9e3779b97f4a7c15")}, {"max_abs_error", 0.0}, {"fatal", true}};
  r.steps.push_back(check_mm);

  StepRecord check_eq = Step(5, "check_equal", "new result differs from the old", true, 63, 40.0);
  check_eq.check = Check("different", "equal", Verdict::kFail);
  check_eq.check->mismatch_count = 0;
  check_eq.details = {{"wide", int64_t{-9007199254740993}}};
  r.steps.push_back(check_eq);

  StepRecord addr = Step(6, "check_address", "A kept its address", true, 56, 0.5);
  addr.check = Check("same", "same", Verdict::kPass);
  r.steps.push_back(addr);

  StepRecord params = Step(7, "check_kernel_params", "captures are identical", true, 70, 2.0);
  params.check = Check("identical", "identical", Verdict::kPass);
  r.steps.push_back(params);

  StepRecord update = Step(8, "update", "update e1 from g2", true, 71, 0.4);
  update.check = Check("success", "success", Verdict::kPass);
  update.wall_stats = TimingStats{20, 0.3, 0.4, 0.9, 1.1};
  update.details = {{"result", std::string("success")}, {"error_node", int64_t{-1}}};
  r.steps.push_back(update);

  StepRecord bad =
      Step(9, "check_matmul", "updated exec computes A·B with the new data", true, 74, 790.0);
  bad.status = StepStatus::kFailed;
  bad.check = Check("pass", "2 mismatches", Verdict::kFail);
  bad.check->mismatch_count = 2;
  bad.check->mismatches = {{7, "1.5", "0"}, {4096, "-2.25", "nan"}};
  r.steps.push_back(bad);

  StepRecord failed = Step(10, "unmap", "", false, 80, 17.5);
  failed.status = StepStatus::kFailed;
  failed.error = "unmap: range [0x7f3a00000000, +2 MiB) is not mapped";
  r.steps.push_back(failed);

  StepRecord skipped = Step(11, "free", "", false, 88, 0.0);
  skipped.status = StepStatus::kSkipped;
  r.steps.push_back(skipped);

  r.summary.steps = 12;
  r.summary.ok = 9;
  r.summary.failed = 2;
  r.summary.skipped = 1;
  r.summary.checks_passed = 4;
  r.summary.checks_failed = 2;
  r.summary.exit_code = 4;
  r.summary.failed_step = 10;
  r.summary.result = "error";
  r.summary.duration_ms = 12.5;
  r.summary.peak_rss_bytes = 123456789012ull;  // above 2^32: a decimal string
  return r;
}

std::string SchemaErrors(const std::string& json_text, const std::string& schema_path) {
  const nlohmann::json schema_doc =
      nlohmann::json::parse(ReadAll(std::string(VMMRUN_SOURCE_DIR) + "/" + schema_path));
  const nlohmann::json doc = nlohmann::json::parse(json_text);
  valijson::Schema schema;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_doc);
  parser.populateSchema(schema_adapter, schema);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter doc_adapter(doc);
  if (validator.validate(schema, doc_adapter, &results)) return "";
  std::string out;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string where;
    for (const std::string& c : error.context) where += c;
    out += where + ": " + error.description + "\n";
  }
  return out;
}

std::string TempDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("vmm_report_test_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing>";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace vmm::report::testutil
