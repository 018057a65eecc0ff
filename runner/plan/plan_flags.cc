// PlanBuilder's busy flags: a busy that runs `until` a flag, the set_flag step that sets it, and
// the rule between the two. On the GPU the busy kernel keeps the stream until the flag is set;
// a step of the same step list that queues work behind it would run only after the flag (and one
// that waits for the stream would wait for it), so between the busy and its set_flag a step list
// may hold only what neither queues nor waits: VMM calls that do not wait, check_access, sync
// points, other flags, busy kernels left running, isolate blocks and together groups.
#include <algorithm>

#include "kernels/launch_config.h"
#include "runner/base/format.h"
#include "runner/plan/plan_builder.h"

namespace vmm {
namespace {

// The longest a busy waits for its flag when the step gives no duration.
constexpr uint64_t kDefaultUntilNs = 10ull * 1000000000;

// A step that may run while a busy of its step list waits for a flag: it neither puts work on the
// stream nor waits for it.
bool RunsBesideAWaitingBusy(const Step& step) {
  switch (step.op) {
    case Op::kUnmap:
    case Op::kRelease:
    case Op::kSetAccess:
      return step.wait().set && !step.wait().value;
    case Op::kBusy:
      return step.async().value;
    case Op::kCheckpoint:  // its lock waits for the busy; expecting its refusal, only until timeout
      return step.expect_error().set;
    case Op::kSignal:
    case Op::kWaitFor:
    case Op::kSetFlag:
    case Op::kCheckAccess:
    case Op::kCheckRecord:  // reads the run's records, nothing on the device
    case Op::kIsolate:
    case Op::kTogether:
      return true;
    default:
      return Describe(step.op).family == OpFamily::kMemory;
  }
}

}  // namespace

void PlanBuilder::BusyUntil(const Step& step, PlanStep* p) {
  const Located<std::string>& until = Key(step, "until");
  if (!until.set) return;
  if (!step.duration().set) p->duration_ns = kDefaultUntilNs;
  if (!step.async().value) {
    Error(At(until, step),
          "a busy that runs until flag '" + until.value +
              "' must be left running (async: true): the flag is set by a later step, which "
              "cannot run while this one waits for the kernel");
  }
  FlagState& flag = flags_[until.value];
  if (flag.set_by != nullptr) {
    Error(At(until, step), "flag '" + until.value + "' is already set (line " +
                               std::to_string(flag.set_by->loc.line) +
                               "), so this kernel would stop at once; name a new flag (in a "
                               "threads group: order this busy before the set_flag with a sync "
                               "point)");
    return;
  }
  if (flag.slot < 0) {
    if (plan_.flags.size() >= static_cast<size_t>(kernels::kMaxBusyFlags)) {
      Error(At(until, step), "a scenario (or an isolate block) has at most " +
                                 std::to_string(kernels::kMaxBusyFlags) + " busy flags");
      return;
    }
    flag.slot = static_cast<int>(plan_.flags.size());
    plan_.flags.push_back(until.value);
    flag.first_wait = &step;
  }
  p->event = flag.slot;
  open_flags_[thread_].emplace_back(until.value, &step);
}

void PlanBuilder::CheckOpenFlags(const Step& step) {
  auto open = open_flags_.find(thread_);
  if (open == open_flags_.end() || open->second.empty() || RunsBesideAWaitingBusy(step)) return;
  const auto& [name, busy] = open->second.front();
  Error(step.loc, std::string("'") + OpName(step.op) + "' cannot run while the busy at line " +
                      std::to_string(busy->loc.line) + " waits for flag '" + name +
                      "': its work would queue behind that kernel (or wait for it), which ends "
                      "only when the flag is set. Set the flag first ({op: set_flag, flag: " +
                      name + "}), or move this step after the set_flag or to another thread");
}

template <>
void PlanBuilder::PlanOp<Op::kSetFlag>(const Step& step, PlanStep* p, BufferUses*) {
  const Located<std::string>& name = Key(step, "flag");
  auto it = flags_.find(name.value);
  if (it == flags_.end() || it->second.slot < 0) {
    std::vector<std::string> known;
    for (const auto& [flag, state] : flags_) known.push_back(flag);
    const std::string close = SuggestName(name.value, known);
    Error(At(name, step), "no busy step before this one runs until '" + name.value + "'" +
                              (close.empty() ? "" : "; did you mean '" + close + "'?") +
                              " (a busy with until: " + name.value +
                              " and async: true comes first; in a threads group, order it "
                              "before this step with a sync point)");
    return;
  }
  FlagState& flag = it->second;
  if (flag.set_by != nullptr) {
    Error(At(name, step), "flag '" + name.value + "' is already set (line " +
                              std::to_string(flag.set_by->loc.line) + "): each flag is set once");
    return;
  }
  flag.set_by = &step;
  p->event = flag.slot;
  for (auto& [list, open] : open_flags_)
    std::erase_if(open, [&](const auto& o) { return o.first == name.value; });
}

void PlanBuilder::CheckFlagsSet() {
  std::vector<std::pair<const Step*, std::string>> unset;  // in file order
  for (const auto& [name, flag] : flags_)
    if (flag.set_by == nullptr && flag.first_wait != nullptr)
      unset.emplace_back(flag.first_wait, name);
  std::sort(unset.begin(), unset.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first->loc.line, a.first->loc.column) <
           std::pair(b.first->loc.line, b.first->loc.column);
  });
  for (const auto& [busy, name] : unset) {
    Error(At(Key(*busy, "until"), *busy), "no set_flag step sets flag '" + name +
                                              "': the kernel would run its whole duration; "
                                              "add {op: set_flag, flag: " +
                                              name +
                                              "} after the steps that should land while it runs");
  }
}

}  // namespace vmm
