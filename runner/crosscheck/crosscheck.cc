#include "runner/crosscheck/crosscheck.h"

#include <chrono>
#include <exception>
#include <map>

#include "runner/base/exit_code.h"
#include "runner/base/input_file.h"
#include "runner/pipeline/run_scenario.h"
#include "runner/report/report_io.h"

namespace vmm {
namespace {

using report::DiffRow;
using report::Report;
using report::RowKind;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// What the shrinker keeps: the field that differs and, where the values are words rather than
// hashes or counts, the two values.
std::string SignatureOf(const DiffRow& row) {
  const bool words = row.field == "status" || row.field == "verdict" || row.field == "actual" ||
                     row.field == "result" || row.field == "expected";
  std::string s = report::RowKindName(row.kind) + std::string("|") + row.field;
  if (words) s += "|" + row.base.value_or("-") + "|" + row.now.value_or("-");
  return s;
}

void CountSteps(const std::vector<report::StepRecord>& steps, CrosscheckSummary* s) {
  for (const report::StepRecord& r : steps) {
    ++s->steps;
    ++s->ops[r.op];
    if (!r.expected_error.empty()) {
      const report::Scalar* rule = report::FindDetail(r.details, "rule");
      ++s->rules[rule != nullptr ? report::ScalarText(*rule) : "(" + r.expected_error + ")"];
    }
    CountSteps(r.body, s);
  }
}

// One scenario on both backends.
struct PairRun {
  ScenarioOutcome reference, model;
};

class Runner {
 public:
  explicit Runner(const CrosscheckOptions& options) : options_(options) {}

  ScenarioOutcome RunOn(BackendKind backend, const std::string& name, const std::string& text,
                        double* seconds) {
    RunRequest request;
    request.path = name + ".yaml";
    request.text = text;
    request.backend = backend;
    request.device = options_.device;
    request.host_devices = options_.host_devices;
    request.child_exe = options_.child_exe;
    request.argv = {"vmm-run", "crosscheck"};
    const Clock::time_point start = Clock::now();
    ScenarioOutcome out = RunScenario(std::move(request));
    *seconds += Since(start);
    return out;
  }

  PairRun RunBoth(const std::string& name, const std::string& text, CrosscheckSummary* s) {
    PairRun pair;
    pair.reference = RunOn(options_.reference, name, text, &s->reference_s);
    pair.model = RunOn(options_.model, name, text, &s->model_s);
    return pair;
  }

  // The first disagreement's signature, "" when the two agree, "exit|..." when a side did not
  // produce a report.
  static std::string Compare(const PairRun& pair, std::vector<DiffRow>* rows) {
    if (!pair.reference.report || !pair.model.report) {
      return "exit|" + std::to_string(pair.reference.exit_code) + "|" +
             std::to_string(pair.model.exit_code);
    }
    *rows = Disagreements(*pair.reference.report, *pair.model.report);
    return rows->empty() ? "" : SignatureOf(rows->front());
  }

  const CrosscheckOptions& options_;
};

// "" when `r` reads back from its JSON as itself (every stable field), else what differs: a
// report the tool writes and cannot read faithfully is a vmm-run bug.
std::string RoundTrip(const Report& r) {
  StatusOr<Report> back = report::ParseReportJson(report::ReportToJson(r), r.scenario_name);
  if (!back.ok()) return "its report does not read back: " + back.status().message();
  report::DiffResult result;
  report::DiffReports(r, *back, report::DiffConfig{}, &result);
  for (const DiffRow& row : result.rows)
    if (row.kind != RowKind::kInfo)
      return "its report reads back changed: " + row.step + " " + row.field;
  return "";
}

}  // namespace

std::vector<DiffRow> Disagreements(const Report& reference, const Report& model) {
  report::DiffConfig config;  // as reports/baselines/cross-machine.yaml: verdicts, not timings
  config.timing.enabled = false;
  config.ignore_device = true;
  report::DiffResult result;
  report::DiffReports(reference, model, config, &result);
  std::vector<DiffRow> out;
  for (DiffRow& row : result.rows)
    if (row.kind != RowKind::kInfo) out.push_back(std::move(row));
  return out;
}

StatusOr<CrosscheckSummary> RunCrosscheck(const CrosscheckOptions& options) {
  CrosscheckSummary s;
  Runner runner(options);
  const int count = options.files.empty() ? options.count : static_cast<int>(options.files.size());
  const Clock::time_point start = Clock::now();
  std::map<std::string, int> shrunk;    // by signature
  std::string previous, previous_text;  // the scenario run before this one
  for (int k = 0; k < count; ++k) {
    if (options.time_limit_s > 0 && Since(start) > options.time_limit_s) {
      s.time_limit_hit = true;
      break;
    }
    std::string name, text;
    const Clock::time_point gen_start = Clock::now();
    if (options.files.empty()) {
      gen::GenOptions g = options.gen;
      g.seed = options.gen.seed + static_cast<uint64_t>(k);
      gen::GeneratedScenario made = gen::Generate(g);
      name = made.name;
      text = std::move(made.text);
    } else {
      name = options.files[k];
      StatusOr<std::string> read = ReadInputFile(name, Limit::kInputBytes);
      if (!read.ok()) return read.status();
      text = std::move(read).value();
    }
    s.generate_s += Since(gen_start);
    ++s.scenarios;
    std::string outcome;
    try {
      PairRun pair = runner.RunBoth(name, text, &s);
      for (const ScenarioOutcome* o : {&pair.reference, &pair.model}) {
        if (o->exit_code != kExitUnavailable) continue;
        if (previous.empty()) return Unavailable(o->error);
        // It worked for the scenario before: that one left the context unusable (a sticky device
        // fault, which no later call in this process survives).
        s.context_lost_after = previous;
        s.failures.emplace_back(previous, "the device was unusable after it ran: " + o->error);
        Disagreement d;
        d.name = previous;
        d.signature = "context lost";
        d.text = d.shrunk = previous_text;
        if (options.found) options.found(d);
        s.disagreements.push_back(std::move(d));
        if (options.progress) options.progress(name, "not run: the device is unusable");
        return s;
      }
      if (pair.reference.exit_code == kExitInputError || pair.model.exit_code == kExitInputError) {
        ++s.invalid;
        const ScenarioOutcome& bad =
            pair.reference.exit_code == kExitInputError ? pair.reference : pair.model;
        s.failures.emplace_back(name,
                                bad.error.empty() ? FormatDiagnostics(bad.diagnostics) : bad.error);
        outcome = "invalid";
      } else {
        if (pair.reference.report) {
          CountSteps(pair.reference.report->steps, &s);
          ++s.results[pair.reference.report->summary.result];
        }
        for (const ScenarioOutcome* o : {&pair.reference, &pair.model}) {
          if (!o->report) continue;
          if (std::string why = RoundTrip(*o->report); !why.empty()) {
            ++s.internal;
            s.failures.emplace_back(name, why);
          }
        }
        std::vector<DiffRow> rows;
        const std::string signature = Runner::Compare(pair, &rows);
        if (signature.empty()) {
          ++s.agreed;
          if (pair.reference.report->summary.result == "skipped" &&
              pair.model.report->summary.result == "skipped")
            ++s.skipped;
          outcome = "agree";
        } else {
          Disagreement d;
          d.name = name;
          d.signature = signature;
          d.text = text;
          d.shrunk = text;
          const Clock::time_point shrink_start = Clock::now();
          if (options.shrink && shrunk[signature]++ < options.shrinks_per_signature) {
            auto keep = [&](const std::string& candidate) {
              PairRun p = runner.RunBoth(name, candidate, &s);
              std::vector<DiffRow> r;
              const std::string sig = Runner::Compare(p, &r);
              if (!p.reference.report || !p.model.report) return sig == signature;
              for (const DiffRow& row : r)
                if (SignatureOf(row) == signature) return true;
              return false;
            };
            d.shrunk = ShrinkScenario(text, keep, options.shrink_budget, &d.shrink);
          }
          s.shrink_s += Since(shrink_start);
          PairRun last = runner.RunBoth(name, d.shrunk, &s);
          Runner::Compare(last, &d.rows);
          if (last.reference.report) d.reference = std::move(*last.reference.report);
          if (last.model.report) d.model = std::move(*last.model.report);
          if (options.found) options.found(d);
          s.disagreements.push_back(std::move(d));
          outcome = "disagree (" + signature + ")";
        }
      }
    } catch (const std::exception& e) {
      ++s.internal;
      s.failures.emplace_back(name, std::string("internal error: ") + e.what());
      outcome = "internal error";
    }
    if (options.progress) options.progress(name, outcome);
    previous = name;
    previous_text = std::move(text);
  }
  return s;
}

}  // namespace vmm
