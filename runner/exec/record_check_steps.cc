// check_record: judges facts an earlier step recorded. The step is found by name among the run's
// records so far, nested ones included (an isolate block's, a together group's, a thread's); each
// fact is one of its details, or its `status` or `wall_us`.
#include <cstdlib>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {

using report::StepRecord;

namespace {

// The record named `name` in `records` (depth first, in order), or nullptr.
const StepRecord* FindRecord(const std::vector<StepRecord>& records, size_t count,
                             const std::string& name) {
  for (size_t i = 0; i < count; ++i) {
    const StepRecord& r = records[i];
    if (r.name == name) return &r;
    if (const StepRecord* inner = FindRecord(r.body, r.body.size(), name)) return inner;
  }
  return nullptr;
}

// Fact `key` of `record`: a detail, or the record's status or wall time.
std::optional<report::Scalar> Fact(const StepRecord& record, const std::string& key) {
  if (key == "status") return report::Scalar(std::string(report::StepStatusName(record.status)));
  if (key == "wall_us") return report::Scalar(record.wall_us);
  if (const report::Scalar* d = report::FindDetail(record.details, key)) return *d;
  return std::nullopt;
}

std::optional<double> Number(const report::Scalar& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

std::optional<double> Number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

// Whether `fact` equals the text written in the scenario: numbers by value, the rest as text.
bool Equal(const report::Scalar& fact, const std::string& want) {
  const std::optional<double> number = Number(fact);
  const std::optional<double> wanted = Number(want);
  if (number && wanted) return *number == *wanted;
  return report::ScalarText(fact) == want;
}

// What to say about a fact the record lacks: the closest name it has, or all of them.
std::string AbsentText(const StepRecord& record, const std::string& key) {
  std::vector<std::string> names = {"status", "wall_us"};
  for (const report::Detail& d : record.details) names.push_back(d.first.str());
  const std::string close = SuggestName(key, names);
  if (!close.empty()) return "absent; did you mean '" + close + "'?";
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return "absent (the record has " + list + ")";
}

}  // namespace

template <>
Status RunStep<Op::kCheckRecord>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&]() -> Status {
    if (state.records == nullptr || step.src == nullptr)
      return InternalError("check_record without the run's records");
    const size_t earlier = state.records->empty() ? 0 : state.records->size() - 1;
    const StepRecord* target = FindRecord(*state.records, earlier, step.node_name);
    if (target == nullptr) {
      return RuntimeError("no record of step '" + step.node_name +
                          "' so far (a step inside a block records only when the block ran)");
    }
    std::string expected, actual;
    bool pass = true;
    auto judge = [&](const StepMap& map, const char* relation) {
      for (const StepMapEntry& e : map.entries) {
        const std::string& want = e.value.value;
        // An empty text (no error node, no name) reads as "" in the check.
        auto shown = [](const std::string& text) { return text.empty() ? "\"\"" : text; };
        expected += (expected.empty() ? "" : ", ") + e.key + " " + relation + " " + shown(want);
        const std::optional<report::Scalar> fact = Fact(*target, e.key);
        std::string seen = fact ? shown(report::ScalarText(*fact)) : AbsentText(*target, e.key);
        bool ok = false;
        if (fact && std::string(relation) == "=") {
          ok = Equal(*fact, want);
        } else if (fact) {
          const std::optional<double> number = Number(*fact), bound = Number(want);
          ok = number && bound &&
               (std::string(relation) == ">=" ? *number >= *bound : *number <= *bound);
          if (!number) seen += " (not a number)";
        }
        actual += (actual.empty() ? "" : ", ") + e.key + " = " + seen;
        pass = pass && ok;
      }
    };
    judge(step.src->equals_map(), "=");
    judge(step.src->at_least_map(), ">=");
    judge(step.src->at_most_map(), "<=");
    report::CheckRecord check;
    check.expected = expected;
    check.actual = actual;
    check.verdict = pass ? report::Verdict::kPass : report::Verdict::kFail;
    record.check = std::move(check);
    return Status::Ok();
  });
}

template <>
std::string DescribeStep<Op::kCheckRecord>(const Plan&, const PlanStep& step, const StepRecord& r) {
  if (!r.check) return "";
  return VerdictText(r) + "  '" + step.node_name + "': " + r.check->actual + " (expected " +
         r.check->expected + ")";
}

}  // namespace vmm
