// Threads groups: the executor runs each thread on a host thread of its own against one engine
// (SharedEngine), nests the records per thread with each op's latency, and a thread that stops
// abandons its sync points so that nobody waits forever. SharedEngine's own contract is tested
// against an engine that counts how many of its calls overlap.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "runner/base/input_file.h"
#include "runner/engine/fault_engine.h"
#include "runner/engine/host/host_test_util.h"
#include "runner/engine/shared_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

const char* kTwoMappers = R"(version: 1
name: two_mappers
granularity: 2MiB
buffers:
  A: {shape: [524288]}
  B: {shape: [524288]}
steps:
  - {op: reserve, buffer: A}
  - {op: reserve, buffer: B}
  - name: group
    threads:
      - thread: one
        steps:
          - {op: create, alloc: a, size: 2MiB}
          - {op: map, buffer: A, alloc: a}
          - {op: set_access, buffer: A}
          - {op: fill, buffer: A, seed: 3}
          - {op: signal, point: a ready}
      - thread: two
        steps:
          - {op: create, alloc: b, size: 2MiB}
          - {op: map, buffer: B, alloc: b}
          - {op: set_access, buffer: B}
          - {op: wait_for, point: a ready}
          - {op: copy, from: A, to: B}
          - {op: check_equal, buffer: B, other: A}
)";

const report::Scalar* Detail(const report::StepRecord& r, const std::string& key) {
  for (const report::Detail& d : r.details)
    if (d.first == key) return &d.second;
  return nullptr;
}

TEST(ThreadsRun, EachThreadRunsItsStepsAndTheRecordNestsThemWithLatencies) {
  Planned p(kTwoMappers);
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> engine = TestTwin();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  ASSERT_EQ(out.summary.exit_code, 0) << out.steps.back().error;
  EXPECT_EQ(out.summary.checks_passed, 1);  // the thread's check counts
  const report::StepRecord& group = out.steps[2];
  EXPECT_EQ(group.op, "threads");
  ASSERT_EQ(group.body.size(), 2u);
  EXPECT_EQ(group.body[0].op, "thread");
  EXPECT_EQ(group.body[0].name, "one");
  EXPECT_EQ(group.body[1].name, "two");
  ASSERT_EQ(group.body[1].body.size(), 6u);
  EXPECT_EQ(group.body[1].body[4].op, "copy");
  ASSERT_TRUE(group.body[1].body[5].check);
  EXPECT_EQ(group.body[1].body[5].check->verdict, report::Verdict::kPass);
  // Latency: both threads' maps overall, one per thread.
  ASSERT_NE(Detail(group, "map_n"), nullptr);
  EXPECT_EQ(std::get<int64_t>(*Detail(group, "map_n")), 2);
  EXPECT_EQ(std::get<int64_t>(*Detail(group.body[0], "map_n")), 1);
  EXPECT_GT(std::get<double>(*Detail(group, "create_p99_us")), 0.0);
  EXPECT_EQ(Detail(group.body[0], "copy_n"), nullptr);  // thread one copies nothing
}

// A thread with `context: none` runs its VMM calls on the engine prepared without a context (on
// the twin nothing changes: the H200 takes every VMM call without one) and its record says so.
TEST(ThreadsRun, AThreadWithoutAContextMapsAndItsRecordSaysSo) {
  std::string text = kTwoMappers;
  const std::string thread_one = "      - thread: one\n";
  text.replace(text.find(thread_one), thread_one.size(), thread_one + "        context: none\n");
  Planned refused(text);  // thread one also fills: a kernel, refused without a context
  EXPECT_NE(refused.errors.find("'fill' cannot run in a thread with context: none"),
            std::string::npos)
      << refused.errors;
  const std::string fill = "          - {op: fill, buffer: A, seed: 3}\n";
  text.erase(text.find(fill), fill.size());
  text.replace(text.find("{op: copy, from: A, to: B}"), 26, "{op: memset, buffer: B, value: 5}");
  text.replace(text.find("{op: check_equal, buffer: B, other: A}"), 38,
               "{op: check_value, buffer: B, value: 5}");
  Planned p(text);
  ASSERT_EQ(p.errors, "");
  ASSERT_EQ(p.plan.steps[2].body.size(), 2u);
  EXPECT_TRUE(p.plan.steps[2].body[0].no_context);
  EXPECT_FALSE(p.plan.steps[2].body[1].no_context);
  std::unique_ptr<Engine> engine = TestTwin();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  ASSERT_EQ(out.summary.exit_code, 0) << out.steps.back().error;
  const report::StepRecord& group = out.steps[2];
  ASSERT_NE(Detail(group.body[0], "context"), nullptr);
  EXPECT_EQ(std::get<std::string>(*Detail(group.body[0], "context")), "none");
  EXPECT_EQ(Detail(group.body[1], "context"), nullptr);  // current: the default, not written
}

// Ping-pong: each thread waits for a point the other signals after ITS wait. Only threads that
// really run at the same time finish this (run one after the other, the first would wait forever).
TEST(ThreadsRun, ThreadsRunAtTheSameTime) {
  Planned p(R"(version: 1
name: ping_pong
steps:
  - threads:
      - thread: ping
        steps:
          - {op: signal, point: ping 1}
          - {op: wait_for, point: pong 1}
          - {op: signal, point: ping 2}
          - {op: wait_for, point: pong 2}
      - thread: pong
        steps:
          - {op: wait_for, point: ping 1}
          - {op: signal, point: pong 1}
          - {op: wait_for, point: ping 2}
          - {op: signal, point: pong 2}
)");
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> engine = TestTwin();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 0);
  EXPECT_EQ(out.steps[0].body[1].body.size(), 4u);
}

// A run that injects errors wraps its engine in a FaultEngine under the shared one; the threads
// groups behave as without it: here a synchronize waits for a busy kernel outside the engine's
// lock, so another thread can set the flag that ends the kernel (the FaultEngine forwards
// WaitForWork). Before it did, the synchronize held the lock for the busy's whole duration.
TEST(ThreadsRun, InjectingErrorsLeavesTheThreadsAsTheyWere) {
  Planned p(R"(version: 1
name: threads_and_injection
granularity: 2MiB
buffers:
  W: {shape: [524288]}
  X: {shape: [524288]}
steps:
  - {op: reserve, buffer: W}
  - {op: create, alloc: w, size: 2MiB}
  - {op: map, buffer: W, alloc: w}
  - {op: set_access, buffer: W}
  - threads:
      - thread: compute
        steps:
          - {op: busy, buffer: W, touch: write, value: 5, until: go, duration: 10s, async: true}
          - {op: signal, point: launched}
      - thread: waiter
        steps:
          - {op: wait_for, point: launched}
          - {op: signal, point: syncing}
          - {op: synchronize, name: waits for the kernel}
      - thread: setter
        steps:
          - {op: wait_for, point: syncing}
          - {op: reserve, buffer: X}
          - {op: free, buffer: X}
          - {op: set_flag, name: go, flag: go}
    name: group
  - {op: inject_error, call: create, nth: 1, error: CUDA_ERROR_OUT_OF_MEMORY}
)");
  ASSERT_EQ(p.errors, "");
  ASSERT_TRUE(p.plan.injects_errors);
  std::unique_ptr<Engine> engine = TestTwin();
  const auto start = std::chrono::steady_clock::now();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 0) << out.steps[4].error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5))
      << "the synchronize held the engine until the busy's duration ran out";
}

// Thread one's create fails (an injected driver error): it stops, and thread two, which waits for
// the point thread one never reaches, fails at once instead of hanging; the run fails with exit 4.
TEST(ThreadsRun, AWaitForAPointOfAStoppedThreadFailsInsteadOfHanging) {
  Planned p(kTwoMappers);
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> twin = TestTwin();
  // The first create fails: thread one's or thread two's, whichever comes first.
  FaultEngine faulty(*twin, FaultPlan{FaultKind::kCreate, 1});
  RunOutcome first = RunPlan(p.plan, faulty, nullptr);
  EXPECT_EQ(first.summary.exit_code, 4);
  const report::StepRecord& group = first.steps[2];
  EXPECT_EQ(group.status, report::StepStatus::kFailed);
  // Whichever thread's create was the first call of its kind failed; if it was thread one's, thread
  // two's wait names it.
  const report::StepRecord& one = group.body[0];
  const report::StepRecord& two = group.body[1];
  // The failed create ran in a burst with the map and set_access after it (thread_steps.cc): they
  // are skipped, with a record each, and so is everything after them.
  const report::StepRecord& failed_thread =
      one.body[0].status == report::StepStatus::kFailed ? one : two;
  ASSERT_EQ(failed_thread.body.size(), &failed_thread == &one ? 5u : 6u);
  for (size_t i = 1; i < failed_thread.body.size(); ++i)
    EXPECT_EQ(failed_thread.body[i].status, report::StepStatus::kSkipped) << "step " << i;
  EXPECT_EQ(Detail(failed_thread, "map_n"), nullptr) << "a skipped map has no latency sample";
  if (one.body[0].status == report::StepStatus::kFailed) {
    EXPECT_EQ(one.body[4].status, report::StepStatus::kSkipped);  // its signal
    EXPECT_EQ(two.body[3].status, report::StepStatus::kFailed);
    EXPECT_NE(two.body[3].error.find("'a ready' will never be signalled: thread 'one' stopped"),
              std::string::npos)
        << two.body[3].error;
  } else {
    EXPECT_EQ(two.body[0].status, report::StepStatus::kFailed);
  }
}

// A group whose threads cannot all be started (the process's address space capped so that only
// the first few thread stacks fit) fails naming the thread, with no step run by any thread, and
// the threads already started are released from the barrier instead of waiting forever there. In a
// child process: the cap would break the test runner's own threads (and a sanitizer's shadow).
TEST(ThreadsRun, AThreadThatCannotStartFailsTheGroupWithNoStepRun) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a sanitizer's shadow memory does not live under an address-space cap";
#endif
  std::string text = "version: 1\nname: many\nsteps:\n  - threads:\n";
  for (int t = 0; t < 16; ++t) {
    const std::string n = std::to_string(t);
    text +=
        "      - thread: t" + n + "\n        steps:\n          - {op: signal, point: p" + n + "}\n";
  }
  Planned p(text);
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> engine = TestTwin();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);  // a group left waiting at its barrier ends the child by SIGALRM
    // Room for two and a half thread stacks (the process's default size) above what it has mapped.
    size_t stack = 8u << 20;
    pthread_attr_t attr;
    if (pthread_getattr_default_np(&attr) == 0) {
      (void)pthread_attr_getstacksize(&attr, &stack);
      pthread_attr_destroy(&attr);
    }
    const StatusOr<std::string> statm = ReadInputFile("/proc/self/statm", 4096);
    const long pages = statm.ok() ? std::atol(statm->c_str()) : 0;  // the first field: all mapped
    const rlim_t cap = static_cast<rlim_t>(pages) * sysconf(_SC_PAGESIZE) + stack * 5 / 2;
    const rlimit limit{cap, cap};
    if (pages == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(10);
    RunOutcome out = RunPlan(p.plan, *engine, nullptr);
    const report::StepRecord& group = out.steps[0];
    int code = 0;
    if (out.summary.exit_code == 0) code = 11;  // every thread started: the cap was too loose
    if (group.error.find("could not be started") == std::string::npos) code = code ? code : 12;
    if (group.body.size() != 16) code = code ? code : 13;
    for (const report::StepRecord& thread : group.body)
      if (thread.status != report::StepStatus::kSkipped || !thread.body.empty())
        code = code ? code : 14;
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status)
                                 << " (14: SIGALRM, the group hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10: no cap set, 11: every thread started, 12: the error does not say which thread, 13: "
         "not a record per thread, 14: a thread ran a step";
}

// A thread whose steps are all VMM calls runs them as one burst and builds their records after
// its run (thread_steps.cc): when its map fails, the records still come in step order (the create,
// the failed map with its error, the rest skipped), the samples count only the calls that ran, and
// the group's wall covers the threads' own.
TEST(ThreadsRun, AFailedLastBurstIsRecordedInOrderAfterTheRun) {
  Planned p(R"(version: 1
name: last_burst
granularity: 2MiB
buffers:
  A: {shape: [524288]}
steps:
  - {op: reserve, buffer: A}
  - name: group
    threads:
      - thread: only
        steps:
          - {op: create, alloc: a, size: 2MiB}
          - {op: map, buffer: A, alloc: a}
          - {op: set_access, buffer: A}
          - {op: unmap, buffer: A}
          - {op: release, alloc: a}
)");
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> twin = TestTwin();
  FaultEngine faulty(*twin, FaultPlan{FaultKind::kMap, 1});
  RunOutcome out = RunPlan(p.plan, faulty, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  const report::StepRecord& group = out.steps[1];
  ASSERT_EQ(group.body.size(), 1u);
  const report::StepRecord& only = group.body[0];
  ASSERT_EQ(only.body.size(), 5u);
  const char* ops[] = {"create", "map", "set_access", "unmap", "release"};
  const report::StepStatus want[] = {report::StepStatus::kOk, report::StepStatus::kFailed,
                                     report::StepStatus::kSkipped, report::StepStatus::kSkipped,
                                     report::StepStatus::kSkipped};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(only.body[i].op, ops[i]) << "step " << i;
    EXPECT_EQ(only.body[i].status, want[i]) << "step " << i;
  }
  EXPECT_FALSE(only.body[1].error.empty());
  EXPECT_NE(only.error.find("'map A' failed"), std::string::npos) << only.error;
  ASSERT_NE(Detail(only, "map_n"), nullptr);
  EXPECT_EQ(std::get<int64_t>(*Detail(only, "map_n")), 1);  // the failed call, timed
  EXPECT_EQ(Detail(only, "unmap_n"), nullptr);
  EXPECT_GE(group.wall_us, only.wall_us);  // both end at the thread's `finished`
}

// An engine whose Map and kernel launches (Fill) take 20 ms and count how many run at once.
class OverlapEngine final : public Engine {
 public:
  explicit OverlapEngine(bool concurrent) : concurrent_(concurrent) {}
  const DeviceInfo& info() const override { return info_; }
  bool ConcurrentVmm() const override { return concurrent_; }
  bool WaitForWork() override {
    waited_ += 1;
    return true;
  }
  Status Map(DevicePtr, uint64_t, uint64_t, AllocHandle) override { return Slow(); }
  Status LaunchKernel(const KernelNodeParams&, OpTiming*) override { return Slow(); }
  Status Unmap(DevicePtr, uint64_t, SyncNote*) override { return Slow(); }
  int most() const { return most_; }
  int waited() const { return waited_; }

 private:
  Status Slow() {
    const int now = ++running_;
    int seen = most_.load();
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running_;
    return Status::Ok();
  }
  DeviceInfo info_;
  bool concurrent_;
  std::atomic<int> running_{0}, most_{0}, waited_{0};
};

template <typename Call>
void FromFourThreads(Call call) {
  std::vector<std::jthread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(call);
}

TEST(SharedEngine, ACudaLikeEnginesMapsReachItAtOnceAndItsKernelsOneAtATime) {
  OverlapEngine inner(true);
  SharedEngine shared(inner);
  FromFourThreads([&] { EXPECT_TRUE(shared.Map(0, 0, 0, AllocHandle{}).ok()); });
  EXPECT_EQ(inner.most(), 4);
  OverlapEngine kernels(true);
  SharedEngine shared_kernels(kernels);
  FromFourThreads([&] { EXPECT_TRUE(shared_kernels.Fill(0, 0, 0, nullptr).ok()); });
  EXPECT_EQ(kernels.most(), 1);
}

TEST(SharedEngine, TheTwinsCallsGoOneAtATime) {
  OverlapEngine inner(false);
  SharedEngine shared(inner);
  FromFourThreads([&] { EXPECT_TRUE(shared.Map(0, 0, 0, AllocHandle{}).ok()); });
  EXPECT_EQ(inner.most(), 1);
}

// On the twin an unmap that waits waits first (outside the lock) and its note says what that
// wait found; one that does not wait does not. On a CUDA-like engine every unmap reaches the
// engine at once, which waits for itself.
TEST(SharedEngine, AWaitingUnmapWaitsFirstAndSaysSo) {
  OverlapEngine twin(false);
  SharedEngine shared(twin);
  SyncNote note;
  ASSERT_TRUE(shared.Unmap(0, 0, &note).ok());
  EXPECT_EQ(twin.waited(), 1);
  EXPECT_TRUE(note.waited);
  SyncNote no_wait;
  no_wait.wait = false;
  ASSERT_TRUE(shared.Unmap(0, 0, &no_wait).ok());
  EXPECT_EQ(twin.waited(), 1);
  OverlapEngine cuda(true);
  SharedEngine shared_cuda(cuda);
  FromFourThreads([&] {
    SyncNote n;  // waits
    EXPECT_TRUE(shared_cuda.Unmap(0, 0, &n).ok());
  });
  EXPECT_EQ(cuda.waited(), 0);
  EXPECT_EQ(cuda.most(), 4);
}

}  // namespace
}  // namespace vmm
