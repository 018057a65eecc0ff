#include "runner/pipeline/pin_outcomes.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "runner/base/sha256.h"
#include "runner/yaml/yaml_loader.h"
#include "runner/yaml/yaml_writer.h"

namespace vmm {
namespace {

// One observing block, or step with `expect_error: observe`, found in the scenario's text.
struct Observer {
  bool step = false;                   // a step's expect_error (else an isolate block's expect)
  int step_line = 0;                   // the block's step (what the report's records carry)
  int word_line = 0, word_column = 0;  // the `observe` scalar
  int key_line = 0, key_column = 0;    // the `expect` / `expect_error` key
  bool flow = false;                   // the isolate map (the step) is written `{...}`
};

bool FlowAt(const std::vector<std::string>& lines, int line, int column) {
  const std::string& at = lines[static_cast<size_t>(line - 1)];
  return static_cast<size_t>(column - 1) < at.size() && at[static_cast<size_t>(column - 1)] == '{';
}

// Every isolate block below `v` whose expect is `observe`, and every step whose expect_error is.
void FindObservers(const YamlValue& v, const std::vector<std::string>& lines,
                   std::vector<Observer>* out) {
  for (const YamlValue& item : v.items) FindObservers(item, lines, out);
  if (!v.IsMap()) return;
  for (const YamlMember& m : v.members) {
    if (m.key != "expect_error" || !m.value.IsScalar() || m.value.scalar != "observe") continue;
    Observer o;
    o.step = true;
    o.step_line = v.line;
    o.word_line = m.value.line;
    o.word_column = m.value.column;
    o.key_line = m.line;
    o.key_column = m.column;
    o.flow = FlowAt(lines, v.line, v.column);
    out->push_back(o);
  }
  if (const YamlValue* isolate = v.Find("isolate"); isolate != nullptr && isolate->IsMap()) {
    for (const YamlMember& m : isolate->members) {
      if (m.key != "expect" || !m.value.IsScalar() || m.value.scalar != "observe") continue;
      Observer o;
      o.step_line = v.line;
      o.word_line = m.value.line;
      o.word_column = m.value.column;
      o.key_line = m.line;
      o.key_column = m.column;
      o.flow = FlowAt(lines, isolate->line, isolate->column);
      out->push_back(o);
    }
  }
  for (const YamlMember& m : v.members) FindObservers(m.value, lines, out);
}

// What the report's observing records say, by the line of their step.
struct Outcomes {
  std::map<int, std::set<std::string>> blocks;  // how each observing block's child ended
  std::map<int, std::set<std::string>> steps;   // what each observing step's call returned
  std::map<int, std::string> rules;             // the VMM rule an observing step breaks
};

void Observed(const std::vector<report::StepRecord>& records, Outcomes* out) {
  for (const report::StepRecord& r : records) {
    if (r.op == "isolate" && r.check && r.check->expected == "observe")
      out->blocks[r.line].insert(r.check->actual);
    if (r.expected_error == "observe" && !r.actual_error.empty()) {
      out->steps[r.line].insert(r.actual_error);
      if (const report::Scalar* rule = report::FindDetail(r.details, "rule"))
        out->rules[r.line] = report::ScalarText(*rule);
    }
    Observed(r.body, out);  // an isolate block's child steps, a together group's blocks
  }
}

// How many characters the `observe` scalar takes at `col` of `line` (7 plain, 9 quoted), or 0 when
// it is not written there.
size_t ObserveWidth(const std::string& line, size_t col) {
  if (line.compare(col, 7, "observe") == 0) return 7;
  if (col < line.size() && (line[col] == '"' || line[col] == '\'') &&
      line.compare(col + 1, 7, "observe") == 0 && col + 8 < line.size() &&
      line[col + 8] == line[col])
    return 9;
  return 0;
}

// Removes `expect_error: observe` of `o` from `lines` (a call that succeeded needs none); false
// when it is not written in a way this can take out (then the caller refuses).
bool RemoveObserve(const Observer& o, std::vector<std::string>* lines) {
  if (o.key_line != o.word_line) return false;
  std::string& line = (*lines)[static_cast<size_t>(o.word_line - 1)];
  const size_t key = static_cast<size_t>(o.key_column - 1);
  const size_t width = ObserveWidth(line, static_cast<size_t>(o.word_column - 1));
  if (width == 0) return false;
  const size_t end = static_cast<size_t>(o.word_column - 1) + width;
  if (!o.flow) {  // block style: the key is the line's only content
    if (line.find_first_not_of(' ') != key || line.find_first_not_of(' ', end) != std::string::npos)
      return false;
    lines->erase(lines->begin() + (o.word_line - 1));
    return true;
  }
  size_t from = key;
  while (from > 0 && line[from - 1] == ' ') --from;
  if (from == 0 || line[from - 1] != ',') return false;  // `op` comes first in a step
  line.erase(from - 1, end - (from - 1));
  return true;
}

// The expectation an outcome is, as the `expect` value and the `at` step ("" for none); false
// when the outcome is not one a block can expect.
bool Expectation(const std::string& outcome, std::string* expect, std::string* at) {
  std::string head = outcome;
  at->clear();
  if (const size_t i = outcome.find(" at '"); i != std::string::npos && outcome.back() == '\'') {
    head = outcome.substr(0, i);
    *at = outcome.substr(i + 5, outcome.size() - i - 6);
  }
  if (head == "ok" && at->empty()) {
    *expect = "ok";
  } else if (head.rfind("CUDA_ERROR_", 0) == 0 && head.find(' ') == std::string::npos) {
    *expect = head;
  } else if (head.rfind("signal SIG", 0) == 0) {
    *expect = "{signal: " + head.substr(7) + "}";
  } else {
    return false;
  }
  return true;
}

// The one outcome `outcomes` has for the observer at `line` (`where` names it; `verb` is how its
// runs ended: "ended", "returned"; `what`, "block" or "step"), or why there is none to pin.
StatusOr<std::string> TheOutcome(const std::map<int, std::set<std::string>>& outcomes, int line,
                                 const std::string& where, const char* verb, const char* what) {
  auto it = outcomes.find(line);
  if (it == outcomes.end())
    return InvalidInput("the report has no record of " + where + " (did the run reach it?)");
  if (it->second.size() != 1) {
    std::string seen;
    for (const std::string& e : it->second) seen += (seen.empty() ? "'" : "', '") + e;
    return InvalidInput(where + " " + verb + " differently in its runs (" + seen +
                        "'): a loop writes it; pin each iteration's " + what + " by hand");
  }
  return *it->second.begin();
}

// Pins the step of `o`: its observed error replaces `observe`; CUDA_SUCCESS takes the key out.
Status PinStep(const Observer& o, const Outcomes& outcomes, std::vector<std::string>* lines) {
  const std::string where = "the step at line " + std::to_string(o.step_line);
  StatusOr<std::string> outcome =
      TheOutcome(outcomes.steps, o.step_line, where, "returned", "step");
  if (!outcome.ok()) return outcome.status();
  const std::string& actual = *outcome;
  if (actual == "CUDA_SUCCESS") {
    if (auto rule = outcomes.rules.find(o.step_line); rule != outcomes.rules.end()) {
      return InvalidInput(where + " succeeded, but it breaks VMM rule '" + rule->second +
                          "', which the validator refuses without expect_error: keep "
                          "expect_error: observe");
    }
    if (!RemoveObserve(o, lines)) {
      return InvalidInput(where +
                          " succeeded: take its 'expect_error: observe' out by hand (it "
                          "is not written on one line of its own or after a comma)");
    }
    return Status::Ok();
  }
  if (actual.rfind("CUDA_ERROR_", 0) != 0) {
    return InvalidInput(where + " returned '" + actual +
                        "', which expect_error cannot name: fix the step, or keep observe");
  }
  std::string& line = (*lines)[static_cast<size_t>(o.word_line - 1)];
  const size_t col = static_cast<size_t>(o.word_column - 1);
  const size_t width = ObserveWidth(line, col);
  if (width == 0) return InternalError(where + ": 'observe' is not where the YAML reader put it");
  line.replace(col, width, actual);
  return Status::Ok();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

StatusOr<PinResult> PinObservedOutcomes(const std::string& scenario, const report::Report& report) {
  if (!report.scenario_sha256.empty() && Sha256Hex(scenario) != report.scenario_sha256) {
    return InvalidInput(
        "the scenario is not the one the report was made from (its SHA-256 "
        "differs): run it again, then pin from the new report");
  }
  std::vector<Diagnostic> diagnostics;
  std::optional<YamlValue> doc = LoadYaml(scenario, report.scenario_path, &diagnostics);
  if (!doc || !diagnostics.empty()) return InvalidInput(FormatDiagnostics(diagnostics));
  std::vector<std::string> lines = Lines(scenario);
  std::vector<Observer> observers;
  FindObservers(*doc, lines, &observers);
  if (observers.empty())
    return InvalidInput(
        "the scenario has no isolate block with expect: observe and no step with expect_error: "
        "observe; nothing to pin");
  Outcomes outcomes;
  Observed(report.steps, &outcomes);
  // Bottom to top, right to left: an edit never moves the position of one still to make.
  std::sort(observers.begin(), observers.end(), [](const Observer& a, const Observer& b) {
    return std::pair(a.word_line, a.word_column) > std::pair(b.word_line, b.word_column);
  });
  PinResult result;
  for (const Observer& o : observers) {
    if (o.step) {
      VMM_RETURN_IF_ERROR(PinStep(o, outcomes, &lines));
      ++result.pinned;
      continue;
    }
    const std::string where = "the block at line " + std::to_string(o.step_line);
    StatusOr<std::string> found = TheOutcome(outcomes.blocks, o.step_line, where, "ended", "block");
    if (!found.ok()) return found.status();
    const std::string& outcome = *found;
    std::string expect, at;
    if (!Expectation(outcome, &expect, &at)) {
      return InvalidInput(where + " ended with '" + outcome +
                          "', which is not an expectation a block can state (ok, "
                          "CUDA_ERROR_<NAME> or a signal): fix the block, or keep expect: observe");
    }
    std::string& line = lines[static_cast<size_t>(o.word_line - 1)];
    const size_t col = static_cast<size_t>(o.word_column - 1);
    const size_t width = ObserveWidth(line, col);
    if (width == 0) return InternalError(where + ": 'observe' is not where the YAML reader put it");
    std::string replacement = expect;
    if (!at.empty() && o.flow) replacement += ", at: " + YamlScalarText(at, true);
    line.replace(col, width, replacement);
    if (!at.empty() && !o.flow) {
      lines.insert(lines.begin() + o.word_line,
                   std::string(static_cast<size_t>(o.key_column - 1), ' ') +
                       "at: " + YamlScalarText(at, true));
    }
    ++result.pinned;
  }
  for (size_t i = 0; i < lines.size(); ++i)
    result.text += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  return result;
}

}  // namespace vmm
