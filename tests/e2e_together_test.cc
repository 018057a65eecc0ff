// End-to-end tests of together groups on the host twin: several isolate blocks whose children run
// at the same time. That they really overlap is proven with busy kernels of a stated length (a
// group of 4 one-second children ends in well under the 4 s a sequential run needs, and every
// child was ready before the first one ended); each child keeps its own limit; the parent's stop
// signals end every child; no descriptor or zombie is left; diff and JUnit name each block's steps
// under the group and the block.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "runner/base/stop_signal.h"
#include "runner/isolate/child_block_runner.h"
#include "runner/plan/plan.h"
#include "runner/report/report_io.h"
#include "runner/scenario/parse.h"
#include "tests/e2e_process_test.h"
#include "tests/scratch_dir.h"
#include "tests/vmm_run_process.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;
using report::StepRecord;
using report::StepStatus;
using report::Verdict;

class E2ETogether : public E2EProcessTest {
 protected:
  E2ETogether() : E2EProcessTest("vmm_e2e_together") {}
};

const report::Scalar* Detail(const StepRecord& s, const std::string& key) {
  for (const auto& [k, v] : s.details)
    if (k == key) return &v;
  return nullptr;
}

// Four children, each with a one-second busy kernel, written by a loop inside the group.
const char* kFourBusy = R"yaml(name: four_busy
vars: {n: 4}
buffers: {H: {shape: [1024]}}
steps:
  - name: four at once
    together:
      - for: i
        in: {range: [0, "${n}"]}
        steps:
          - isolate: {expect: ok}
            name: "child ${i}"
            steps:
              - {op: reserve, buffer: H}
              - {op: create, alloc: p, size: 2MiB}
              - {op: map, buffer: H, alloc: p}
              - {op: set_access, buffer: H}
              - {op: busy, name: "one second (${i})", buffer: H, duration: 1s}
  - {op: synchronize, name: after the group}
)yaml";

// What cannot pass sequentially: 4 × 1 s of busy kernels end in under 3 s, and every child was
// ready (its engine open, its steps about to run) before the first one ended.
TEST_F(E2ETogether, TheChildrenOfAGroupRunAtTheSameTime) {
  Finished f = Run(Write("four.yaml", kFourBusy) + " --backend host -q --report " + Path("f.json"));
  ASSERT_EQ(f.exit_code, 0) << f.out;
  report::Report r = Read("f.json");
  ASSERT_EQ(r.steps.size(), 2u);
  const StepRecord& group = r.steps[0];
  EXPECT_EQ(group.op, "together");
  EXPECT_EQ(group.status, StepStatus::kOk);
  ASSERT_EQ(group.body.size(), 4u);
  EXPECT_GE(group.wall_us, 1e6);  // each child's busy lasts 1 s
  EXPECT_LT(group.wall_us, 3e6) << "4 one-second children took as long as running them in turn";
  double last_ready = 0, first_end = 1e300, last_start = 0;
  for (size_t i = 0; i < group.body.size(); ++i) {
    const StepRecord& block = group.body[i];
    EXPECT_EQ(block.name, "child " + std::to_string(i));
    EXPECT_EQ(block.op, "isolate");
    ASSERT_TRUE(block.check.has_value());
    EXPECT_EQ(block.check->verdict, Verdict::kPass) << block.check->actual;
    EXPECT_EQ(block.body.size(), 5u);  // the child's own records, nested as for a lone block
    ASSERT_TRUE(block.child && block.child->started_ms && block.child->ready_ms &&
                block.child->ended_ms);
    last_start = std::max(last_start, *block.child->started_ms);
    last_ready = std::max(last_ready, *block.child->ready_ms);
    first_end = std::min(first_end, *block.child->ended_ms);
    // Started before its 1 s busy began, reaped after it ended. (ready_ms is when this process
    // read the child's hello, which may come a little after the child sent it.)
    EXPECT_GE(*block.child->ended_ms - *block.child->started_ms, 1000.0);
  }
  EXPECT_LT(last_start, first_end);
  EXPECT_LT(last_ready, first_end) << "a child ended before another one was ready";
  ASSERT_NE(Detail(group, "all_ran_at_once"), nullptr);
  EXPECT_TRUE(std::get<bool>(*Detail(group, "all_ran_at_once")));
  EXPECT_NEAR(std::get<double>(*Detail(group, "overlap_ms")), first_end - last_ready, 1e-6);
  EXPECT_EQ(r.summary.checks_passed, 4);  // one verdict per block
  EXPECT_EQ(r.steps[1].status, StepStatus::kOk);
}

// The step log shows each block under its group, and each child's steps under its block.
TEST_F(E2ETogether, TheLogShowsEachBlockAndItsChildsSteps) {
  Finished f = Run(Write("four.yaml", kFourBusy) + " --backend host --report " + Path("f.json"));
  ASSERT_EQ(f.exit_code, 0) << f.out;
  for (int i = 0; i < 4; ++i) {
    const std::string block = "    │    " + std::to_string(i) + "  child " + std::to_string(i);
    const size_t at = f.out.find(block);
    ASSERT_NE(at, std::string::npos) << f.out;
    EXPECT_NE(f.out.find("    │     │    4  one second (" + std::to_string(i) + ")", at),
              std::string::npos)
        << f.out;
  }
}

// Each block keeps its own limit: one that expects its timeout passes at 1 s, one that hangs
// past its kill_after fails, one that ends at once passes; the group waits for all three.
TEST_F(E2ETogether, EachChildKeepsItsOwnLimit) {
  const std::string text = R"(name: limits
buffers: {H: {shape: [1024]}}
steps:
  - name: three limits
    together:
      - isolate: {expect: {timeout: 1s}}
        name: times out as expected
        steps:
          - {op: reserve, buffer: H}
          - {op: create, alloc: p, size: 2MiB}
          - {op: map, buffer: H, alloc: p}
          - {op: set_access, buffer: H}
          - {op: busy, buffer: H, duration: 60s}
      - isolate: {expect: ok, kill_after: 2s}
        name: hangs past its limit
        steps:
          - {op: reserve, buffer: H}
          - {op: create, alloc: p, size: 2MiB}
          - {op: map, buffer: H, alloc: p}
          - {op: set_access, buffer: H}
          - {op: busy, buffer: H, duration: 60s}
      - isolate: {expect: ok}
        name: quick
        steps: [{op: synchronize}]
)";
  Finished f = Run(Write("limits.yaml", text) + " --backend host --report " + Path("l.json"));
  EXPECT_EQ(f.exit_code, 1) << f.out;  // one block's verdict failed
  // The log's line for the group says which block failed (it printed a bare "FAILED: ").
  EXPECT_NE(f.out.find("FAILED: 3 children"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("2 of 3 as expected; not: hangs past its limit"), std::string::npos)
      << f.out;
  EXPECT_LT(f.seconds, 20.0);
  report::Report r = Read("l.json");
  const StepRecord& group = r.steps[0];
  EXPECT_EQ(group.status, StepStatus::kFailed);
  ASSERT_EQ(group.body.size(), 3u);
  EXPECT_EQ(group.body[0].check->actual, "timeout 1s");
  EXPECT_EQ(group.body[0].check->verdict, Verdict::kPass);
  EXPECT_TRUE(group.body[0].child->timed_out);
  EXPECT_EQ(group.body[1].check->actual, "timeout 2s");
  EXPECT_EQ(group.body[1].check->verdict, Verdict::kFail);
  EXPECT_EQ(group.body[1].status, StepStatus::kFailed);
  EXPECT_EQ(group.body[2].check->verdict, Verdict::kPass);
  // The quick child ended long before the others were killed: each end is its own.
  EXPECT_LT(*group.body[2].child->ended_ms + 500, *group.body[0].child->ended_ms);
  EXPECT_LT(*group.body[0].child->ended_ms + 500, *group.body[1].child->ended_ms);
  EXPECT_EQ(r.summary.checks_passed, 2);
  EXPECT_EQ(r.summary.checks_failed, 1);
}

const char* kLongGroup = R"(name: long_group
buffers: {H: {shape: [1024]}}
steps:
  - name: three long children
    together:
      - for: i
        in: {range: [0, 3]}
        steps:
          - isolate: {expect: ok, kill_after: 60s}
            name: "long ${i}"
            steps:
              - {op: reserve, buffer: H}
              - {op: create, alloc: p, size: 2MiB}
              - {op: map, buffer: H, alloc: p}
              - {op: set_access, buffer: H}
              - {op: busy, name: "long work ${i}", buffer: H, duration: 30s}
  - {op: synchronize, name: after the group}
)";

// Every `__child` of `pid`, once there are `n` of them (within `limit`); fewer when they did not
// all start.
std::vector<pid_t> WaitForChildren(pid_t pid, size_t n, std::chrono::seconds limit) {
  std::vector<pid_t> found;
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    found.clear();
    for (pid_t c : ChildrenOf(pid)) {
      std::ifstream cmdline("/proc/" + std::to_string(c) + "/cmdline");
      std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
      if (text.find("__child") != std::string::npos) found.push_back(c);
    }
    if (found.size() >= n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return found;
}

// SIGTERM, SIGINT or SIGHUP to vmm-run kills every child of the group at once; each block's
// record says so; the run ends interrupted and nothing is left running.
TEST_F(E2ETogether, StoppingTheParentEndsEveryChildOfTheGroup) {
  const std::string scenario = Write("long.yaml", kLongGroup);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    const std::string log = Path("log.txt");
    const auto start = Clock::now();
    const pid_t pid = Spawn(scenario + " --backend host -q --report " + Path("i.json"), log);
    ASSERT_TRUE(WaitForStopHandlers(pid, std::chrono::seconds(20)));
    const std::vector<pid_t> children = WaitForChildren(pid, 3, std::chrono::seconds(20));
    ASSERT_EQ(children.size(), 3u);
    kill(pid, sig);
    Finished f = Wait(pid, start, log);
    EXPECT_EQ(f.exit_code, 128 + sig) << f.out;
    EXPECT_LT(f.seconds, 20.0);
    for (pid_t child : children)
      EXPECT_TRUE(GoneWithin(child, std::chrono::milliseconds(2000))) << child;
    report::Report r = Read("i.json");
    EXPECT_TRUE(r.summary.interrupted);
    const StepRecord& group = r.steps[0];
    ASSERT_EQ(group.body.size(), 3u);
    for (const StepRecord& block : group.body) {
      ASSERT_TRUE(block.child.has_value()) << block.name;
      EXPECT_EQ(block.child->stopped_by, SignalName(sig)) << block.name;
      EXPECT_EQ(block.child->signal, "SIGKILL") << block.name;
      EXPECT_EQ(block.check->actual, "interrupted") << block.name;
    }
    EXPECT_EQ(r.steps[1].status, StepStatus::kSkipped);
  }
}

// A parent that dies without a chance to clean up (SIGKILL) takes every child with it.
TEST_F(E2ETogether, NoChildOutlivesAKilledParent) {
  const std::string scenario = Write("long.yaml", kLongGroup);
  const std::string log = Path("log.txt");
  const auto start = Clock::now();
  const pid_t pid = Spawn(scenario + " --backend host -q --report " + Path("k.json"), log);
  const std::vector<pid_t> children = WaitForChildren(pid, 3, std::chrono::seconds(20));
  ASSERT_EQ(children.size(), 3u);
  kill(pid, SIGKILL);
  Wait(pid, start, log);
  for (pid_t child : children) EXPECT_TRUE(GoneWithin(child, std::chrono::milliseconds(3000)));
}

// In-process: a group through the ChildBlockRunner with a named descriptor handed to every child
// (a memfd standing in for an exported allocation); afterwards this process has exactly the
// descriptors it had before and no child left, reaped or not.
TEST_F(E2ETogether, AGroupLeavesNoDescriptorAndNoZombie) {
  const std::string text = R"(name: fds
buffers: {A: {shape: [1024]}}
steps:
  - together:
      - for: i
        in: {range: [0, 3]}
        steps:
          - isolate: {expect: ok}
            name: "block ${i}"
            steps:
              - {op: reserve, buffer: A}
              - {op: create, alloc: a, size: 2MiB}
              - {op: map, buffer: A, alloc: a}
              - {op: set_access, buffer: A}
              - {op: fill, buffer: A, seed: "${i}"}
)";
  std::vector<Diagnostic> d;
  std::optional<Scenario> scenario = ParseScenario(text, "fds.yaml", &d);
  ASSERT_TRUE(scenario.has_value()) << FormatDiagnostics(d);
  Plan plan = BuildPlan(*scenario, &d);
  ASSERT_TRUE(d.empty()) << FormatDiagnostics(d);
  ASSERT_EQ(plan.steps[0].body.size(), 3u);
  auto count_fds = [] {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) (void)e, ++n;
    return n;
  };
  const int memfd = memfd_create("exported", MFD_CLOEXEC);
  ASSERT_GE(memfd, 0);
  isolate::ChildBlockOptions options;
  options.exe = VMMRUN_BINARY;
  options.scenario_path = "fds.yaml";
  options.scenario_text = text;
  options.backend = "host";
  isolate::ChildBlockRunner runner(options);
  const size_t before = count_fds();
  for (int round = 0; round < 3; ++round) {
    std::vector<StepRecord> records(3);
    Status s = runner.RunGroup(plan.steps[0], {{"kv", memfd}}, records);
    ASSERT_TRUE(s.ok()) << s.message();
    for (const StepRecord& record : records) {
      EXPECT_EQ(record.check->verdict, Verdict::kPass) << record.check->actual;
      EXPECT_EQ(record.child->fds, std::vector<std::string>{"kv"});
      EXPECT_EQ(record.body.size(), 5u);
    }
    EXPECT_EQ(count_fds(), before) << "after round " << round;
    EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // no child at all: every one was reaped
    EXPECT_EQ(errno, ECHILD);
  }
  // A child that cannot be started ends the group: the ones started before it are killed and
  // reaped, and nothing is left open.
  options.exe = "/nonexistent/vmm-run";
  isolate::ChildBlockRunner broken(options);
  std::vector<StepRecord> records(3);
  EXPECT_FALSE(broken.RunGroup(plan.steps[0], {{"kv", memfd}}, records).ok());
  EXPECT_EQ(count_fds(), before);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  close(memfd);
}

// The committed scenario: 4 children import one exported allocation at once, each names the
// descriptor it received; JUnit and diff name each child's steps "<group> / <block> / <step>".
TEST_F(E2ETogether, DiffAndJUnitNameEachBlocksStepsUnderTheGroup) {
  ASSERT_EQ(Run("scenarios/ipc_many_children.yaml --backend host -q --report " + Path("base.json") +
                " --junit " + Path("junit.xml"))
                .exit_code,
            0);
  report::Report base = Read("base.json");
  const StepRecord* group = nullptr;
  for (const StepRecord& s : base.steps)
    if (s.op == "together") group = &s;
  ASSERT_NE(group, nullptr);
  ASSERT_EQ(group->body.size(), 4u);
  for (const StepRecord& block : group->body)
    EXPECT_EQ(block.child->fds, std::vector<std::string>{"kv"}) << block.name;
  const std::string xml = Text("junit.xml");
  EXPECT_NE(xml.find(R"(name="four workers at once / worker 2")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(name="four workers at once / worker 2 / worker 2 sees its write")"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find(R"(name="four workers at once")"), std::string::npos);  // no case of its own
  EXPECT_NE(xml.find(R"(failures="0")"), std::string::npos);

  // Workers 2 and 3 now write other words (i * i): their quarters' checks in the parent fail, and
  // so do the checks inside them that compare with the word they should have written.
  std::ifstream in(VMMRUN_SOURCE_DIR "/scenarios/ipc_many_children.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "duration: 1s, value: \"0x5EED000${i}\"";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "duration: 1s, value: \"0x5EED000${i * i}\"");
  Finished changed = Run(Write("ipc_many_children.yaml", text) + " --backend host -q --report " +
                         Path("new.json") + " --junit " + Path("new.xml"));
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  Finished d = Run("diff " + Path("base.json") + " " + Path("new.json") +
                   " --config reports/baselines/cross-machine.yaml");
  EXPECT_EQ(d.exit_code, 1) << d.out;
  EXPECT_NE(d.out.find("four workers at once / worker 2 / worker 2 sees its write"),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("four workers at once / worker 2 "), std::string::npos) << d.out;
  const std::string new_xml = Text("new.xml");
  EXPECT_NE(new_xml.find(R"(name="four workers at once / worker 2")"), std::string::npos);
  EXPECT_NE(new_xml.find("expected ok, got check failed"), std::string::npos) << new_xml;
}

// On a GPU (skipped without one): 4 processes with their own CUDA contexts import one exported
// allocation at the same time, each sees the parent's data and writes its quarter, the parent
// reads every quarter back, and the children overlapped (each holds its quarter for 1 s).
TEST_F(E2ETogether, OnTheGpuFourProcessesShareOneAllocationAtOnce) {
  Finished f = Run("scenarios/ipc_many_children.yaml --backend cuda --report " + Path("g.json"));
  if (f.exit_code == 3) GTEST_SKIP() << "no CUDA device: " << f.out;
  ASSERT_EQ(f.exit_code, 0) << f.out;
  report::Report r = Read("g.json");
  for (const StepRecord& s : r.steps) {
    EXPECT_EQ(s.status, StepStatus::kOk) << s.name;
    if (s.op != "together") continue;
    ASSERT_EQ(s.body.size(), 4u);
    for (const StepRecord& block : s.body) {
      std::printf("%s: started %.1f ms, ready %.1f ms, ended %.1f ms\n", block.name.c_str(),
                  block.child->started_ms.value_or(-1), block.child->ready_ms.value_or(-1),
                  block.child->ended_ms.value_or(-1));
    }
    ASSERT_NE(Detail(s, "all_ran_at_once"), nullptr);
    EXPECT_TRUE(std::get<bool>(*Detail(s, "all_ran_at_once")));
  }
}

}  // namespace
}  // namespace vmm
