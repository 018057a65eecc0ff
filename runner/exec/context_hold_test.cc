// Engine::HoldContext: the executor brackets every run of memory calls (RunVmmSteps) and makes no
// other engine call inside a bracket, on the run's thread and on every thread of a threads group.
// The CUDA engine relies on it to skip asking the driver which context is current; a call of
// another kind inside a bracket could switch the context behind its back. Checked against the
// twin wrapped in an engine that notes, per thread, every call made while a bracket is open.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runner/engine/host/host_test_util.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

thread_local bool t_held = false;

class HoldWatchEngine final : public Engine {
 public:
  explicit HoldWatchEngine(Engine& inner) : inner_(inner) {}

  const DeviceInfo& info() const override { return inner_.info(); }
  bool ConcurrentVmm() const override { return inner_.ConcurrentVmm(); }
  bool WaitForWork() override { return inner_.WaitForWork(); }
  void PrepareThread(bool with_context) override { inner_.PrepareThread(with_context); }
  void HoldContext(bool hold) override {
    if (hold == t_held) Note(hold ? "HoldContext(true) nested" : "HoldContext(false) unopened");
    t_held = hold;
    inner_.HoldContext(hold);
  }
  Status SelectDevice(int device) override { return inner_.SelectDevice(device); }
  Status DescribeDevice(int ordinal, DeviceInfo* out) override {
    return inner_.DescribeDevice(ordinal, out);
  }

#define VMMRUN_ENGINE_CALL(name, fault_kind, params, args) \
  Status name params override {                            \
    Seen(#name);                                           \
    return inner_.name args;                               \
  }
#include "runner/engine/engine_calls.def"
#undef VMMRUN_ENGINE_CALL
  using Engine::Create;
  using Engine::Reserve;
  using Engine::SetAccess;

  std::vector<std::string> violations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return violations_;
  }
  int held_calls() const { return held_calls_.load(); }

 private:
  // The calls HoldContext's contract allows inside a bracket.
  static bool MemoryCall(const std::string& name) {
    static const char* const kAllowed[] = {"Reserve", "Free",        "Create",         "Release",
                                           "Map",     "Unmap",       "SetAccess",      "Export",
                                           "Import",  "Granularity", "AllocProperties"};
    return std::any_of(std::begin(kAllowed), std::end(kAllowed),
                       [&](const char* a) { return name == a; });
  }
  void Seen(const std::string& name) {
    if (!t_held) return;
    ++held_calls_;
    if (!MemoryCall(name)) Note(name + " inside a HoldContext bracket");
  }
  void Note(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    violations_.push_back(what);
  }

  Engine& inner_;
  mutable std::mutex mu_;
  std::vector<std::string> violations_;
  std::atomic<int> held_calls_{0};
};

// Memory calls next to kernels, checks and a wait: at the top level, in a repeat (a step run
// alone) and in two threads; a create with properties (its queries run in its burst).
const char* kMixed = R"(version: 1
name: context_hold
granularity: 2MiB
buffers:
  A: {shape: [524288]}
  B: {shape: [524288]}
  C: {shape: [524288]}
steps:
  - {op: reserve, buffer: A}
  - {op: reserve, buffer: B}
  - {op: reserve, buffer: C}
  - {op: create, alloc: c, size: 2MiB, location: device, granularity: minimum}
  - {op: map, buffer: C, alloc: c}
  - {op: set_access, buffer: C, repeat: 2}
  - {op: fill, buffer: C, seed: 1}
  - {op: unmap, buffer: C}
  - {op: map, buffer: C, alloc: c}
  - {op: set_access, buffer: C}
  - {op: memset, buffer: C, value: 7}
  - {op: check_value, buffer: C, value: 7}
  - name: group
    threads:
      - thread: one
        steps:
          - {op: create, alloc: a, size: 2MiB}
          - {op: map, buffer: A, alloc: a}
          - {op: set_access, buffer: A}
          - {op: fill, buffer: A, seed: 3}
          - {op: signal, point: a ready}
          - {op: unmap, buffer: A}
          - {op: release, alloc: a}
      - thread: two
        steps:
          - {op: create, alloc: b, size: 2MiB}
          - {op: map, buffer: B, alloc: b}
          - {op: set_access, buffer: B}
          - {op: wait_for, point: a ready}
          - {op: memset, buffer: B, value: 5}
          - {op: check_value, buffer: B, value: 5}
          - {op: unmap, buffer: B}
          - {op: release, alloc: b}
  - {op: unmap, buffer: C}
  - {op: release, alloc: c}
)";

TEST(ContextHold, OnlyMemoryCallsRunInsideABracketAndEveryBurstIsBracketed) {
  Planned p(kMixed);
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> twin = TestTwin();
  HoldWatchEngine engine(*twin);
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  ASSERT_EQ(out.summary.exit_code, 0) << out.steps.back().error;
  EXPECT_EQ(engine.violations(), std::vector<std::string>{});
  // Every memory call above is one: 3 reserves; the create with its granularity and properties
  // queries; map, set_access twice (a repeat: run alone, still bracketed), unmap, map, set_access;
  // create, map, set_access, unmap, release in each thread; unmap, release.
  EXPECT_EQ(engine.held_calls(), 3 + 3 + 6 + 2 * 5 + 2);
  EXPECT_FALSE(t_held) << "the run's thread left a bracket open";
}

}  // namespace
}  // namespace vmm
