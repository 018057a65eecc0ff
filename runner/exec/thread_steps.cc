// threads: a group of step lists, each run by a host thread of its own; signal / wait_for: the
// named sync points that order steps across them. The validator proved every order the points
// allow legal (runner/plan/plan_threads.cc), so the threads share the run state without locks:
// no two of them touch one slot unordered, and a point's signal happens before its waits return.
//
// The threads start together at a barrier. A thread stops at its first failed step (later steps
// skipped) or fatal check; the points it had still to signal are then abandoned, and a thread that
// waits for one fails at once instead of waiting forever. A stop request (SIGINT) ends every
// thread at its next step or wait. The group's record holds one record per thread (op "thread",
// named as the thread, its steps in its body) and the latency of each op: per thread in the
// thread's details, overall in the group's (`<op>_n`, `_min_us`, `_p50_us`, `_p99_us`,
// `_max_us`, one sample per run of a step).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "runner/base/stop_signal.h"
#include "runner/exec/latency.h"
#include "runner/exec/memory_burst.h"
#include "runner/exec/run_state.h"

namespace vmm {

using report::StepRecord;
using report::StepStatus;

struct ThreadSync {
  enum class Point : uint8_t { kPending, kSignalled, kAbandoned };
  explicit ThreadSync(size_t points, size_t threads)
      : state(points, Point::kPending), abandoned_by(points), waiting(threads) {}

  std::mutex mu;
  std::condition_variable changed;
  std::vector<Point> state;               // by sync point slot
  std::vector<std::string> abandoned_by;  // by slot: the thread that stopped without signalling
  std::atomic<size_t> arrived{0};         // the start barrier
  std::atomic<bool> go{false};            // set by the last to arrive (or by CallOff)
  std::atomic<bool> called_off{false};
  size_t waiting;                                 // threads in the group
  std::chrono::steady_clock::time_point started;  // when the last one arrived (written before go;
                                                  // unset when called off)

  void Set(int point, Point to, const std::string& by = "") {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (state[point] != Point::kPending) return;
      state[point] = to;
      abandoned_by[point] = by;
    }
    changed.notify_all();
  }
  // Every thread waits here until all have arrived, so that they start together: spinning (with a
  // yield, for a machine with fewer cores than threads), as a raw threaded loop's threads wait on
  // a flag. A sleep on a condition variable would have the last thread's wake-ups start the others
  // one by one, tens of µs apart on a VM, inside the group's wall.
  // False when the group was called off instead (CallOff): the thread then runs nothing.
  bool Arrive() {
    if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == waiting) {
      started = std::chrono::steady_clock::now();
      go.store(true, std::memory_order_release);
      return true;
    }
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    return !called_off.load(std::memory_order_relaxed);
  }
  // Not every thread could be started: releases those waiting at the barrier, to run nothing.
  void CallOff() {
    called_off.store(true, std::memory_order_relaxed);
    go.store(true, std::memory_order_release);
  }
  // Until `point` is signalled (ok), abandoned or a stop is requested (an error saying which).
  Status Wait(int point, const std::string& name) {
    std::unique_lock<std::mutex> lock(mu);
    while (state[point] == Point::kPending) {
      if (StopRequested()) return RuntimeError("stopped while waiting for '" + name + "'");
      changed.wait_for(lock, std::chrono::milliseconds(20));
    }
    if (state[point] == Point::kSignalled) return Status::Ok();
    return RuntimeError("'" + name + "' will never be signalled: thread '" + abandoned_by[point] +
                        "' stopped before it got there");
  }
};

namespace {

using Samples = LatencySamples;

// A thread's burst of VMM calls whose records are still to be built: steps [first, first +
// count) of the thread ran (RunVmmSteps, in their compiled slots) and `done` of them succeeded;
// when done < count, step first + done failed with `error`.
struct PendingBurst {
  size_t first = 0, count = 0;
  size_t done = 0;
  Status error;
};

// One thread's run: its steps in order into `out` (one record each), their samples by op.
// Consecutive VMM calls run back to back (RunVmmSteps), as at the top level, so that a thread pays
// per call what the run's own loop pays; they are compiled before the barrier, as a program
// prepares its arguments before it starts its threads. Their records are built before the
// thread's next other step (which may read them or the state they name) or, for the thread's last
// burst, after its run: the time between the barrier and `finished` (the thread's and the group's
// wall) holds the thread's calls, not the bookkeeping before or after them. (A thread that ends
// early still builds its records while others make their calls.)
void RunThread(const PlanStep& thread, RunState& state, ThreadSync& sync, StepRecord& out,
               Samples& samples, std::chrono::steady_clock::time_point& finished) {
  const std::vector<PlanStep>& steps = thread.body;
  // By step: the compiled VMM call of every step that runs in a burst (the others' slots unused).
  std::vector<HotVmmStep> hot;
  try {
    hot.resize(steps.size());
    for (size_t i = 0; i < steps.size(); ++i)
      if (IsBurstable(steps[i])) CompileVmmStep(steps[i], state.plan, &hot[i]);
    out.body.reserve(steps.size());
  } catch (const std::bad_alloc&) {  // the thread still arrives: the others wait for it
    hot.clear();
  }
  state.engine.PrepareThread(!thread.no_context);  // before the barrier, as a program's threads
  if (!sync.Arrive()) return;  // called off: the group records every thread skipped
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool stopped = hot.size() != steps.size();
  if (stopped) {
    out.status = StepStatus::kFailed;
    out.error = "vmm-run ran out of memory while preparing this thread's steps";
  }
  PendingBurst pending;
  auto fail = [&](const PlanStep& step, const Status& status) {
    out.status = StepStatus::kFailed;
    out.error = "'" + step.label + "' failed: " + status.message();
    stopped = true;
  };
  auto record_burst = [&] {
    for (size_t k = 0; k < pending.count && k <= pending.done; ++k) {
      const PlanStep& step = steps[pending.first + k];
      StepRecord& record = AppendStepRecord(out.body, step);
      RecordVmmStep(step, hot[pending.first + k], k < pending.done, state, record);
      samples[record.op].push_back(record.wall_us);
      if (k == pending.done) {
        record.status = StepStatus::kFailed;
        record.error = pending.error.message();
      } else if (record.check && record.check->verdict == report::Verdict::kFail) {
        record.status = StepStatus::kFailed;  // a reserve's expect_address (never fatal)
        out.status = StepStatus::kFailed;
      }
    }
    pending.count = 0;
  };
  try {
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!stopped && StopRequested()) stopped = true;
      if (!stopped && IsBurstable(steps[i])) {
        size_t end = i + 1;
        while (end < steps.size() && IsBurstable(steps[end])) ++end;
        pending.first = i;
        pending.count = end - i;
        pending.error = Status::Ok();
        pending.done = RunVmmSteps(&hot[i], pending.count, state, &pending.error);
        if (pending.done < pending.count) fail(steps[i + pending.done], pending.error);
        i += std::min(pending.done, pending.count - 1);  // ++i moves past the last one run
        continue;
      }
      record_burst();  // a burst is followed by a step of another kind, or by the end
      const PlanStep& step = steps[i];
      StepRecord& record = AppendStepRecord(out.body, step);
      if (stopped) {
        record.status = StepStatus::kSkipped;
        continue;
      }
      std::vector<double>& wall = samples[record.op];
      Status status = RunRecorded(step, state, record, &wall);
      if (!status.ok()) {
        record.status = StepStatus::kFailed;
        record.error = status.message();
        fail(step, status);
      } else if (record.check && record.check->verdict == report::Verdict::kFail) {
        record.status = StepStatus::kFailed;
        out.status = StepStatus::kFailed;  // a failed check: the thread's error stays empty
        if (step.fatal) stopped = true;
      }
    }
  } catch (const std::bad_alloc&) {  // as RunRecorded says it for a step run alone
    out.status = StepStatus::kFailed;
    out.error = "vmm-run ran out of memory while running this thread's steps";
    pending.count = 0;
  }
  finished = std::chrono::steady_clock::now();
  out.wall_us = std::chrono::duration<double, std::micro>(finished - start).count();
  // The points this thread never reached are abandoned: their waiters fail instead of hanging.
  for (const PlanStep& step : steps)
    if (step.op == Op::kSignal) sync.Set(step.event, ThreadSync::Point::kAbandoned, thread.label);
  try {
    record_burst();
  } catch (const std::bad_alloc&) {  // a failure already said stays the thread's error
    out.status = StepStatus::kFailed;
    if (out.error.empty())
      out.error = "vmm-run ran out of memory while recording this thread's steps";
  }
  if (thread.no_context) out.details.emplace_back("context", std::string("none"));
  AddLatency(samples, out.details);
}

}  // namespace

template <>
Status RunStep<Op::kThreads>(const PlanStep& step, RunState& state, StepRecord& record) {
  if (state.sync != nullptr) return InternalError("a threads group inside a threads group");
  ThreadSync sync(state.plan.sync_points.size(), step.body.size());
  state.sync = &sync;
  std::vector<StepRecord> threads;
  std::vector<Samples> samples(step.body.size());
  std::vector<std::chrono::steady_clock::time_point> finished(step.body.size());
  threads.reserve(step.body.size());
  for (const PlanStep& thread : step.body) threads.push_back(NewStepRecord(thread));
  std::string not_started;  // why a thread could not be started (the system's words)
  {
    std::vector<std::jthread> running;
    running.reserve(step.body.size());
    try {
      for (size_t t = 0; t < step.body.size(); ++t) {
        running.emplace_back(
            [&, t] { RunThread(step.body[t], state, sync, threads[t], samples[t], finished[t]); });
      }
    } catch (const std::system_error& e) {  // EAGAIN: the process's thread limit
      not_started = "thread '" + step.body[running.size()].label + "' could not be started (" +
                    e.what() + ")";
      sync.CallOff();
    }
  }  // joined here
  if (!not_started.empty()) {
    state.sync = nullptr;
    for (StepRecord& t : threads) t.status = StepStatus::kSkipped;
    record.body = std::move(threads);
    return RuntimeError(not_started +
                        "; no thread of the group ran a step. Lower the thread count or raise the "
                        "process's limits (ulimit -u: threads, ulimit -v: address space)");
  }
  // From the barrier (every thread ready) to the end of the last thread's last step: starting the
  // threads and building their records after are not the group's work.
  const auto last = *std::max_element(finished.begin(), finished.end());
  record.wall_us = std::chrono::duration<double, std::micro>(last - sync.started).count();
  state.sync = nullptr;
  Samples overall;
  for (const Samples& s : samples)
    for (const auto& [op, wall] : s)
      overall[op].insert(overall[op].end(), wall.begin(), wall.end());
  record.details.emplace_back("threads", static_cast<int64_t>(threads.size()));
  AddLatency(overall, record.details);
  Status failed;
  for (const StepRecord& t : threads) {
    if (!t.error.empty() && failed.ok())
      failed = RuntimeError("thread '" + t.name + "': " + t.error);
    if (t.status == StepStatus::kFailed) record.status = StepStatus::kFailed;
  }
  record.body = std::move(threads);
  return failed;
}

template <>
Status RunStep<Op::kThread>(const PlanStep&, RunState&, StepRecord&) {
  return InternalError("a thread runs inside its threads group");
}

template <>
Status RunStep<Op::kSignal>(const PlanStep& step, RunState& state, StepRecord& record) {
  if (state.sync == nullptr) return InternalError("signal outside a threads group");
  return TimedCall(record, [&] {
    state.sync->Set(step.event, ThreadSync::Point::kSignalled);
    return Status::Ok();
  });
}

template <>
Status RunStep<Op::kWaitFor>(const PlanStep& step, RunState& state, StepRecord& record) {
  if (state.sync == nullptr) return InternalError("wait_for outside a threads group");
  return TimedCall(
      record, [&] { return state.sync->Wait(step.event, state.plan.sync_points[step.event]); });
}

// "3 threads · map p50 12.1 µs, p99 40.2 µs (n=48) · ...": the ops' latency over all threads.
template <>
std::string DescribeStep<Op::kThreads>(const Plan&, const PlanStep& step, const StepRecord& r) {
  return std::to_string(step.body.size()) + " threads" + LatencyText(r.details);
}

template <>
std::string DescribeStep<Op::kThread>(const Plan&, const PlanStep& step, const StepRecord& r) {
  return std::to_string(step.body.size()) + " steps · " + std::to_string(r.body.size()) + " ran";
}

template <>
std::string DescribeStep<Op::kSignal>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return "point '" + plan.sync_points[step.event] + "' reached";
}

template <>
std::string DescribeStep<Op::kWaitFor>(const Plan& plan, const PlanStep& step,
                                       const StepRecord& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (waited %.1f µs)", r.wall_us);
  return "point '" + plan.sync_points[step.event] + "' signalled" + buf;
}

}  // namespace vmm
