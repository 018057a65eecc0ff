// The comparison of two reports (DiffReports) and the row kinds. DiffPaths is in diff_paths.cc.
#include "runner/report/diff.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>

#include "runner/base/diagnostic.h"
#include "runner/base/stop_signal.h"
#include "runner/vocab/op.h"

namespace vmm::report {
namespace {

// How the op table names the `actual` of `op` when a diff compares it exactly ("update result"),
// or nullptr when only the verdict is compared (also for an op this build does not know).
const char* ActualLabel(const std::string& op) {
  const OpInfo* info = FindOp(op);
  return info != nullptr ? info->actual_label : nullptr;
}

// A configured number as written in the config file: "5", "0.25".
std::string Number(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "nan";
}

// Microseconds for people: one decimal from 1 µs up, two below.
std::string Micros(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(us) >= 1 ? "%.1f" : "%.2f", us);
  return buf;
}

std::string Percent(double fraction, bool sign) {
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.0f%%" : "%.0f%%", fraction * 100);
  return buf;
}

std::string StepKey(const StepRecord& s) {
  return s.named ? "name:" + s.name : "op:" + s.op + "#" + std::to_string(s.index);
}

std::string StepDisplay(const StepRecord& s) {
  return s.named ? s.name : s.op + " #" + std::to_string(s.index);
}

std::string StepCount(size_t n) { return std::to_string(n) + (n == 1 ? " step" : " steps"); }

// Steps grouped by key, keys in order of first appearance.
struct KeyIndex {
  std::map<std::string, std::vector<const StepRecord*>> by_key;
  std::vector<std::string> order;
  explicit KeyIndex(const std::vector<StepRecord>& steps) {
    for (const StepRecord& s : steps) {
      auto& list = by_key[StepKey(s)];
      if (list.empty()) order.push_back(StepKey(s));
      list.push_back(&s);
    }
  }
  const std::vector<const StepRecord*>& Get(const std::string& key) const {
    auto it = by_key.find(key);
    return it == by_key.end() ? empty : it->second;
  }
  std::vector<const StepRecord*> empty;
};

// Compares one scenario pair, appending rows for scenario `name` to `out`.
class ScenarioDiff {
 public:
  ScenarioDiff(std::string name, const DiffConfig& config, DiffResult* out)
      : name_(std::move(name)), config_(config), out_(out) {}

  void Compare(const Report& base, const Report& now) {
    ++out_->scenarios;
    // A skipped run ran nothing: say so, and compare nothing else (never a failure, never a pass).
    for (const Report* side : {&base, &now}) {
      if (side->summary.result != "skipped") continue;
      Row(RowKind::kSkipped, "", "result", base.summary.result, now.summary.result,
          std::string(side == &base ? "BASE" : "NEW") +
              " was skipped: " + side->summary.skip_reason);
      return;
    }
    CompareEnvironment(base, now);
    const int base_scheme = DataHashScheme(base.data_hash_scheme);
    const int now_scheme = DataHashScheme(now.data_hash_scheme);
    compare_hashes_ = base_scheme == now_scheme;
    if (!compare_hashes_) {
      Row(RowKind::kInfo, "", "data_hash_scheme", std::to_string(base_scheme),
          std::to_string(now_scheme),
          "the data hashes were computed differently (kernels/datagen.h) and are not compared: "
          "record the baseline again with this vmm-run to compare them");
    }
    CompareLists(base.steps, now.steps, "");
  }

 private:
  void Row(RowKind kind, const std::string& step, const std::string& field,
           std::optional<std::string> base, std::optional<std::string> now, std::string reason) {
    out_->rows.push_back(
        DiffRow{kind, name_, step, field, std::move(base), std::move(now), std::move(reason)});
  }

  // Backend and device differences fail unless ignored: timings and some behaviour are specific
  // to them, so the comparison below would blame the code for the machine.
  void DeviceRow(const std::string& field, const std::string& base, const std::string& now) {
    if (base == now) return;
    if (config_.ignore_device) {
      Row(RowKind::kInfo, "", field, base, now, field + " differs (ignored: --ignore-device)");
    } else {
      Row(RowKind::kRegression, "", field, base, now,
          field +
              " differs: results and timings are specific to it (--ignore-device compares "
              "anyway)");
    }
  }

  // "SIGINT before step 5", or "no" for a run that was not interrupted.
  static std::string Interruption(const Summary& s) {
    if (!s.interrupted) return "no";
    return SignalName(s.signal) + " before step " + std::to_string(s.stopped_at_step);
  }

  // A run stopped by a signal is incomplete: NEW interrupted is a regression (its skipped steps
  // show below too); BASE interrupted is worth knowing.
  void CompareInterruption(const Report& base, const Report& now) {
    if (now.summary.interrupted) {
      Row(RowKind::kRegression, "", "interrupted", Interruption(base.summary),
          Interruption(now.summary),
          "the new run was interrupted by " + SignalName(now.summary.signal) + ": the steps from " +
              std::to_string(now.summary.stopped_at_step) + " on did not run");
    } else if (base.summary.interrupted) {
      Row(RowKind::kInfo, "", "interrupted", Interruption(base.summary), "no",
          "the base run was interrupted: its steps from " +
              std::to_string(base.summary.stopped_at_step) + " on did not run");
    }
  }

  void CompareEnvironment(const Report& base, const Report& now) {
    CompareInterruption(base, now);
    DeviceRow("backend", base.backend, now.backend);
    DeviceRow("device", base.device.name, now.device.name);
    if (base.device.driver_version != now.device.driver_version) {
      Row(RowKind::kInfo, "", "driver_version", base.device.driver_version,
          now.device.driver_version, "the driver changed: differences below may come from it");
    }
    if (base.granularity != now.granularity) {
      Row(RowKind::kRegression, "", "granularity_bytes", std::to_string(base.granularity),
          std::to_string(now.granularity), "the scenario granularity changed");
    }
    if (base.scenario_sha256 != now.scenario_sha256) {
      Row(RowKind::kInfo, "", "scenario sha256", base.scenario_sha256.substr(0, 12),
          now.scenario_sha256.substr(0, 12),
          "the scenario file changed: refresh the baseline if the change is intended");
    }
  }

  void CompareLists(const std::vector<StepRecord>& base, const std::vector<StepRecord>& now,
                    const std::string& prefix) {
    const KeyIndex b(base), n(now);
    for (const std::string& key : b.order) {
      const auto& bs = b.Get(key);
      const auto& ns = n.Get(key);
      const std::string display = prefix + StepDisplay(*bs.front());
      if (bs.size() > 1 || ns.size() > 1) {
        Ambiguous(display, bs.size(), ns.size());
      } else if (ns.empty()) {
        Row(RowKind::kMissing, display, "step", bs.front()->op, std::nullopt,
            "step '" + display + "' is in BASE only");
      } else {
        CompareStep(*bs.front(), *ns.front(), display);
      }
    }
    for (const std::string& key : n.order) {
      if (!b.Get(key).empty()) continue;
      const auto& ns = n.Get(key);
      const std::string display = prefix + StepDisplay(*ns.front());
      if (ns.size() > 1) {
        Ambiguous(display, 0, ns.size());
      } else {
        Row(RowKind::kAdded, display, "step", std::nullopt, ns.front()->op,
            "step '" + display + "' is in NEW only");
      }
    }
  }

  void Ambiguous(const std::string& display, size_t in_base, size_t in_new) {
    Row(RowKind::kAmbiguous, display, "step",
        in_base ? std::optional(StepCount(in_base)) : std::nullopt,
        in_new ? std::optional(StepCount(in_new)) : std::nullopt,
        "'" + display + "' names " + StepCount(in_base) + " in BASE and " + StepCount(in_new) +
            " in NEW: give the steps unique names to compare them");
  }

  void CompareStep(const StepRecord& b, const StepRecord& n, const std::string& display) {
    ++out_->steps;
    if (b.op != n.op) {
      Row(RowKind::kRegression, display, "op", b.op, n.op,
          "the step named '" + display + "' is a different op");
      return;
    }
    const bool status_changed = b.status != n.status;
    // A check whose verdict flipped also flips ok <-> failed: one row (the check's) says it.
    auto ok_or_failed = [](StepStatus s) {
      return s == StepStatus::kOk || s == StepStatus::kFailed;
    };
    const bool verdict_explains_status = b.check && n.check &&
                                         b.check->verdict != n.check->verdict &&
                                         ok_or_failed(b.status) && ok_or_failed(n.status);
    if (status_changed && !verdict_explains_status) {
      const bool better = n.status == StepStatus::kOk;
      std::string reason =
          std::string("status ") + StepStatusName(b.status) + " → " + StepStatusName(n.status);
      if (n.status == StepStatus::kFailed && !n.error.empty()) reason += ": " + n.error;
      Row(better ? RowKind::kImprovement : RowKind::kRegression, display, "status",
          StepStatusName(b.status), StepStatusName(n.status), std::move(reason));
    }
    CompareCheck(b, n, display, status_changed);
    CompareFolds(b, n, display);
    CompareHashes(b, n, display);
    if (b.status == StepStatus::kOk && n.status == StepStatus::kOk) CompareTimings(b, n, display);
    CompareLists(b.body, n.body, display + " / ");
  }

  void CompareCheck(const StepRecord& b, const StepRecord& n, const std::string& display,
                    bool status_changed) {
    if (!b.check || !n.check) {
      // A skipped or failed step has no verdict; its status row already says so.
      if (b.check.has_value() != n.check.has_value() && !status_changed) {
        Row(b.check ? RowKind::kRegression : RowKind::kInfo, display, "verdict",
            b.check ? std::optional(VerdictName(b.check->verdict)) : std::nullopt,
            n.check ? std::optional(VerdictName(n.check->verdict)) : std::nullopt,
            b.check ? "NEW has no verdict for this check" : "NEW has a verdict BASE lacks");
      }
      return;
    }
    const CheckRecord& bc = *b.check;
    const CheckRecord& nc = *n.check;
    const bool fixed = bc.verdict == Verdict::kFail && nc.verdict == Verdict::kPass;
    const std::string verdicts =
        std::string("verdict ") + VerdictName(bc.verdict) + " → " + VerdictName(nc.verdict);
    if (bc.expected != nc.expected) {
      Row(RowKind::kRegression, display, "expected", bc.expected, nc.expected,
          "the scenario's expectation changed: refresh the baseline if intended");
    }
    // A step with expect_error compares the error its call returned exactly, whatever its op.
    const char* label = !b.expected_error.empty() ? "driver error" : ActualLabel(b.op);
    if (label != nullptr && bc.actual != nc.actual) {
      std::string reason = std::string(label) + " " + bc.actual + " → " + nc.actual;
      if (bc.verdict != nc.verdict) reason += " (" + verdicts + ")";
      Row(fixed ? RowKind::kImprovement : RowKind::kRegression, display, "actual", bc.actual,
          nc.actual, std::move(reason));
    } else if (bc.verdict != nc.verdict && (bc.device_fact || nc.device_fact) &&
               config_.ignore_device) {
      Row(RowKind::kInfo, display, "verdict", VerdictName(bc.verdict), VerdictName(nc.verdict),
          verdicts + " (expected " + nc.expected + ", got " + nc.actual +
              "): a device fact, compared only between runs on one machine");
    } else if (bc.verdict != nc.verdict) {
      Row(fixed ? RowKind::kImprovement : RowKind::kRegression, display, "verdict",
          VerdictName(bc.verdict), VerdictName(nc.verdict),
          verdicts + " (expected " + nc.expected + ", got " + nc.actual + ")");
    } else if (bc.verdict == Verdict::kFail && bc.mismatch_count != nc.mismatch_count) {
      // Both failed: more or fewer wrong elements. (Passing counts, e.g. of `expect: different`,
      // change only with the data, which the hashes already compare, within one hash scheme.)
      const bool fewer = nc.mismatch_count < bc.mismatch_count;
      Row(fewer ? RowKind::kImprovement : RowKind::kRegression, display, "mismatch_count",
          std::to_string(bc.mismatch_count), std::to_string(nc.mismatch_count),
          std::string(fewer ? "fewer" : "more") + " elements differ from the reference");
    }
  }

  // Folded records (report: {fold_loops: true}) stand for a number of runs: a different number
  // means a loop ran a different number of times with that status.
  void CompareFolds(const StepRecord& b, const StepRecord& n, const std::string& display) {
    const uint64_t bc = b.folded ? b.folded->count : 1, nc = n.folded ? n.folded->count : 1;
    if (bc == nc) return;
    Row(RowKind::kRegression, display, "folded count", std::to_string(bc), std::to_string(nc),
        "the record stands for " + std::to_string(bc) + " runs in BASE and " + std::to_string(nc) +
            " in NEW");
  }

  // Data hashes of two schemes (compare_hashes_ false) are only checked for presence; the other
  // hashes (a graph's structure_hash) do not depend on the scheme and are always compared.
  void CompareHashes(const StepRecord& b, const StepRecord& n, const std::string& display) {
    for (const auto& [key, value] : b.details) {
      if (!IsHashKey(key)) continue;
      const Scalar* other = FindDetail(n.details, key);
      if (other == nullptr) {
        Row(RowKind::kRegression, display, key.str(), ScalarText(value), std::nullopt,
            "data hash '" + key + "' is missing in NEW");
      } else if ((compare_hashes_ || !IsDataHashKey(key)) &&
                 ScalarText(*other) != ScalarText(value)) {
        Row(RowKind::kRegression, display, key.str(), ScalarText(value), ScalarText(*other),
            "data hash '" + key + "' changed: the step saw or produced different data");
      }
    }
    for (const auto& [key, value] : n.details) {
      if (IsHashKey(key) && FindDetail(b.details, key) == nullptr) {
        Row(RowKind::kInfo, display, key.str(), std::nullopt, ScalarText(value),
            "data hash '" + key + "' is new");
      }
    }
  }

  void CompareTimings(const StepRecord& b, const StepRecord& n, const std::string& display) {
    for (const char* metric : kTimingMetrics) {
      const TimingThreshold& t = config_.ThresholdFor(metric);
      if (!t.enabled) continue;
      const bool wall = std::string(metric) == "wall_us";
      const Boxed<TimingStats>& bs = wall ? b.wall_stats : b.gpu_stats;
      const Boxed<TimingStats>& ns = wall ? n.wall_stats : n.gpu_stats;
      const std::optional<double> bv = bs ? bs->median_us : wall ? b.wall_us : b.gpu_us;
      const std::optional<double> nv = ns ? ns->median_us : wall ? n.wall_us : n.gpu_us;
      if (!bv || !nv || !std::isfinite(*bv) || !std::isfinite(*nv)) continue;
      if (!bs && !ns && !t.single_runs) continue;  // one-shot on both sides: noise by default
      const double spread = bs ? std::max(0.0, bs->p99_us - bs->median_us) : 0.0;
      const double limit = std::max({t.relative * *bv, t.floor_us, t.spread_factor * spread});
      const double delta = *nv - *bv;
      if (std::fabs(delta) <= limit) continue;
      const std::string label = std::string(metric) + (bs && ns ? " median" : "");
      const bool slower = delta > 0;
      const char* cmp = slower ? " > " : " beyond ";
      std::string reason = label + " " + Micros(*bv) + " → " + Micros(*nv) + ": " +
                           (*bv > 0 ? Percent(delta / *bv, true) : std::string("from 0")) + cmp +
                           Percent(t.relative, false) + " and " + (slower ? "+" : "") +
                           Micros(delta) + " µs" + cmp + Number(t.floor_us) + " µs floor";
      if (t.spread_factor * spread > 0) {
        reason += " and" + std::string(cmp) + Micros(t.spread_factor * spread) + " µs (" +
                  Number(t.spread_factor) + " × p99-median spread " + Micros(spread) + " µs)";
      }
      Row(slower ? RowKind::kRegression : RowKind::kImprovement, display, label, Micros(*bv),
          Micros(*nv), std::move(reason));
    }
  }

  std::string name_;
  const DiffConfig& config_;
  DiffResult* out_;
  bool compare_hashes_ = true;  // both reports' data hashes are of one scheme
};

// Kinds --fail-on accepts: improvements and info rows never fail a diff.
constexpr RowKind kFailable[] = {RowKind::kRegression, RowKind::kMissing, RowKind::kAdded,
                                 RowKind::kAmbiguous};

}  // namespace

const char* RowKindName(RowKind kind) {
  switch (kind) {
    case RowKind::kRegression:
      return "regression";
    case RowKind::kImprovement:
      return "improvement";
    case RowKind::kMissing:
      return "missing";
    case RowKind::kAdded:
      return "added";
    case RowKind::kAmbiguous:
      return "ambiguous";
    case RowKind::kInfo:
      return "info";
    case RowKind::kSkipped:
      return "skipped";
  }
  return "unknown";
}

bool ParseRowKind(const std::string& name, RowKind* out) {
  for (RowKind k : kAllRowKinds) {
    if (name == RowKindName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

int DiffResult::Count(RowKind kind) const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [&](const DiffRow& r) { return r.kind == kind; }));
}

void DiffReports(const Report& base, const Report& now, const DiffConfig& config, DiffResult* out) {
  ScenarioDiff(base.scenario_name, config, out).Compare(base, now);
}

StatusOr<FailOn> ParseFailOn(const std::string& list) {
  std::vector<std::string> names;
  std::string expected;
  for (RowKind k : kFailable) {
    names.push_back(RowKindName(k));
    expected += (expected.empty() ? "" : ", ") + names.back();
  }
  FailOn out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string item = list.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    RowKind kind;
    if (!ParseRowKind(item, &kind) ||
        std::find(std::begin(kFailable), std::end(kFailable), kind) == std::end(kFailable)) {
      std::string message = "--fail-on: ";
      if (item.empty()) {
        message += "empty kind";
      } else if (ParseRowKind(item, &kind)) {
        message += "'" + item + "' rows never fail a diff";
      } else {
        message += "unknown kind '" + item + "'";
        if (std::string near = ClosestMatch(item, names); !near.empty()) {
          message += ", did you mean '" + near + "'?";
        }
      }
      return InvalidInput(message + " (expected a comma-separated list of " + expected + ")");
    }
    out.insert(kind);
    start = comma + 1;
  }
  return out;
}

bool DiffFails(const DiffResult& result, const FailOn& fail_on) {
  return std::any_of(result.rows.begin(), result.rows.end(),
                     [&](const DiffRow& r) { return fail_on.count(r.kind) > 0; });
}

}  // namespace vmm::report
