#include "runner/exec/memory_burst.h"

#include <memory>
#include <optional>
#include <utility>

#include "runner/exec/burst_records.h"

namespace vmm {
namespace {

// Room for a burst's compiled steps, not initialized: each is written once, by CompileVmmStep on
// whichever thread compiles it, and a streamed burst's length is not known when it is allocated.
class HotStepBuffer {
 public:
  explicit HotStepBuffer(size_t n) : n_(n), data_(std::allocator<HotVmmStep>().allocate(n)) {}
  ~HotStepBuffer() { std::allocator<HotVmmStep>().deallocate(data_, n_); }
  HotStepBuffer(const HotStepBuffer&) = delete;
  HotStepBuffer& operator=(const HotStepBuffer&) = delete;
  HotVmmStep* data() { return data_; }
  HotVmmStep& operator[](size_t k) { return data_[k]; }

 private:
  size_t n_;
  HotVmmStep* data_;
};

}  // namespace

bool EveryCreateIsBare(const Plan& plan) {
  if (plan.devices > 1) return false;
  for (const AllocSpec& spec : plan.alloc_specs)
    if (spec.read_back || spec.granularity) return false;
  return true;
}

BurstEnd RunMemoryBurst(size_t first, bool one_step, bool plan_bare, RunState& state,
                        std::vector<report::StepRecord>& records,
                        const std::function<void(const PlanStep&)>& emit) {
  const Plan& plan = state.plan;
  const size_t n = plan.steps.size();
  // The run's thread finds and compiles the first kRecordAsideMinSteps steps. A burst that goes
  // on past them, in a plan whose creates are all bare, is streamed: the background thread
  // compiles the rest while the first calls run. Any other burst is found and compiled here.
  size_t end = first + 1;
  const size_t lead = std::min(n, first + kRecordAsideMinSteps);
  while (!one_step && end < lead && IsBurstable(plan.steps[end])) ++end;
  const bool streamed = plan_bare && end == first + kRecordAsideMinSteps;
  if (!streamed) {
    while (!one_step && end < n && IsBurstable(plan.steps[end])) ++end;
  }
  HotStepBuffer burst(streamed ? n - first : end - first);
  bool bare = true;  // every create's record is its handle and size (see BurstRecorder)
  for (size_t j = first; j < end; ++j) {
    CompileVmmStep(plan.steps[j], plan, &burst[j - first]);
    bare = bare && (burst[j - first].op != Op::kCreate || burst[j - first].bare);
  }
  // The record of burst step k, whose call succeeded: built here after the burst, or by a
  // BurstRecorder's thread while the burst runs (it touches only the record, the summary's counts
  // and state.step_address, none of which the burst's calls use).
  auto record_done = [&](size_t k) {
    const PlanStep& step = plan.steps[first + k];
    report::StepRecord& record = AppendStepRecord(records, step);
    RecordVmmStep(step, burst[k], true, state, record);
    if (record.check && record.check->verdict == report::Verdict::kFail) {
      record.status = report::StepStatus::kFailed;  // a reserve's expect_address (never fatal)
    }
    emit(step);
  };
  // Step k of a streamed burst, on the background thread: false once the burst has ended.
  auto compile_ahead = [&](size_t k) {
    if (first + k >= n || !IsBurstable(plan.steps[first + k])) return false;
    CompileVmmStep(plan.steps[first + k], plan, &burst[k]);
    return true;
  };
  std::optional<BurstRecorder> recorder;
  if (streamed) {
    recorder.emplace(record_done, compile_ahead, end - first);
  } else if (end - first >= kRecordAsideMinSteps && bare) {
    recorder.emplace(record_done);
  }
  if (recorder && !recorder->started()) {  // no thread to be had: all of it here instead
    recorder.reset();
    while (streamed && compile_ahead(end - first)) ++end;
  }
  Status error;
  const size_t done = RunVmmSteps(burst.data(), end - first, state, &error,
                                  recorder ? &recorder->progress() : nullptr);
  const size_t built = recorder ? recorder->Finish(done) : 0;
  for (size_t k = built; k < done; ++k) record_done(k);
  if (error.ok()) return BurstEnd{first + done - 1, false};
  const PlanStep& step = plan.steps[first + done];  // the step that failed
  report::StepRecord& record = AppendStepRecord(records, step);
  RecordVmmStep(step, burst[done], false, state, record);
  record.status = report::StepStatus::kFailed;
  record.error = error.message();
  emit(step);
  return BurstEnd{first + done, true};
}

}  // namespace vmm
