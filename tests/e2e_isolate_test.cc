// End-to-end tests of isolate blocks on the host twin: the vmm-run binary starts itself as a
// child, the child really faults (SIGSEGV through a read-only page, under an unmap), hangs or dies
// of a signal, and the parent's report, diff and JUnit say so; the parent's stop signals and its
// death end the child; no descriptor or zombie is left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

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

class E2EIsolate : public E2EProcessTest {
 protected:
  E2EIsolate() : E2EProcessTest("vmm_e2e_isolate") {}
};

const StepRecord* Find(const std::vector<StepRecord>& steps, const std::string& name) {
  for (const StepRecord& s : steps)
    if (s.name == name) return &s;
  return nullptr;
}

TEST_F(E2EIsolate, TheChildEmulatesAsManyDevicesAsItsParent) {
  // The child prepares its run through the pipeline with the parent's --host-devices: with the
  // default of 2, device 3 did not exist in the child and the block failed.
  const std::string scenario =
      Write("four.yaml",
            "name: four\nrequires: {devices: 4}\nbuffers: {A: {shape: [64]}}\nsteps:\n"
            "  - isolate: {expect: ok}\n    steps:\n"
            "      - {op: reserve, buffer: A, size: 2MiB}\n"
            "      - {op: create, alloc: p, size: 2MiB, device: 3}\n"
            "      - {op: map, buffer: A, alloc: p}\n"
            "      - {op: set_access, buffer: A, access: {3: read_write}}\n"
            "      - {op: fill, buffer: A, seed: 1, device: 3}\n"
            "      - {op: unmap, buffer: A}\n      - {op: release, alloc: p}\n"
            "      - {op: free, buffer: A}\n");
  Finished f = Run(scenario + " --backend host --host-devices 4 -q --report " + Path("four.json"));
  EXPECT_EQ(f.exit_code, 0) << f.out;
  report::Report r = Read("four.json");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].status, StepStatus::kOk);
}

TEST_F(E2EIsolate, AWriteThroughAReadOnlyMappingFaultsInTheChildOnly) {
  fs::create_directories(Path("out"));
  Finished f = Run("scenarios/readonly_fault.yaml --backend host --report-dir " + Path("out"));
  ASSERT_EQ(f.exit_code, 0) << f.out;
  // The parent's report only: the child writes none.
  EXPECT_EQ(std::distance(fs::directory_iterator(Path("out")), fs::directory_iterator()), 1);
  report::Report r = Read("out/readonly_fault.host.json");
  const StepRecord* block = Find(r.steps, "write through a read-only mapping");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->op, "isolate");
  EXPECT_EQ(block->status, StepStatus::kOk);
  ASSERT_TRUE(block->check.has_value());
  EXPECT_EQ(block->check->expected, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(block->check->actual, "CUDA_ERROR_ILLEGAL_ADDRESS");
  ASSERT_TRUE(block->child.has_value());
  const report::ChildRecord& c = *block->child;
  EXPECT_GT(c.pid, 0);
  EXPECT_NE(c.pid, 0);
  EXPECT_EQ(c.exit_status, 4);
  EXPECT_EQ(c.signal, "");
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(c.failed_step, "the write that faults");
  EXPECT_EQ(c.fault_line_note, "host fault trap");
  ASSERT_TRUE(c.fault_line.has_value());
  EXPECT_NE(c.fault_line->find("SIGSEGV (SEGV_ACCERR"), std::string::npos) << *c.fault_line;
#if defined(__x86_64__)
  EXPECT_NE(c.fault_line->find("write at 0x"), std::string::npos) << *c.fault_line;
#endif
  // The child's steps, nested: the reads before the fault passed, the write failed for real.
  ASSERT_EQ(block->body.size(), 9u);
  EXPECT_EQ(Find(block->body, "reads still work")->check->verdict, Verdict::kPass);
  const StepRecord* write = Find(block->body, "the write that faults");
  EXPECT_EQ(write->status, StepStatus::kFailed);
  EXPECT_NE(write->error.find("vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: the kernel faulted"),
            std::string::npos)
      << write->error;
  EXPECT_EQ(Find(block->body, "never reached")->status, StepStatus::kSkipped);
  // The parent afterwards.
  for (const char* after :
       {"parent data intact", "parent still computes", "and sees its own change"})
    EXPECT_EQ(Find(r.steps, after)->status, StepStatus::kOk) << after;
  EXPECT_EQ(r.summary.checks_failed, 0);
  EXPECT_NE(f.out.find("(expected CUDA_ERROR_ILLEGAL_ADDRESS): YES"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("│    7  the write that faults"), std::string::npos) << f.out;
}

TEST_F(E2EIsolate, AnUnmapUnderARunningKernelFaultsWithoutTheWaitAndNotWithIt) {
  Finished f = Run("scenarios/unmap_race.yaml --backend host -q --report " + Path("u.json"));
  ASSERT_EQ(f.exit_code, 0) << f.out;
  report::Report r = Read("u.json");
  const StepRecord* block = Find(r.steps, "unmap without waiting");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->check->actual, "CUDA_ERROR_ILLEGAL_ADDRESS");
  const StepRecord* unmap = Find(block->body, "unmap under the kernel");
  EXPECT_EQ(unmap->status, StepStatus::kOk);
  ASSERT_FALSE(unmap->details.empty());
  EXPECT_EQ(unmap->details[0], (report::Details::value_type{"wait", false}));
  const StepRecord* sync = Find(block->body, "the fault surfaces");
  EXPECT_EQ(sync->status, StepStatus::kFailed);
  EXPECT_NE(sync->error.find("vmm_busy_u32: CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos)
      << sync->error;
  EXPECT_EQ(block->child->failed_step, "the fault surfaces");
  // The worker's write hit the unmapped page.
  ASSERT_TRUE(block->child->fault_line.has_value());
  EXPECT_NE(block->child->fault_line->find("SIGSEGV"), std::string::npos);
  // The parent's unmap waited for its kernel, and the kernel's writes are all there.
  const StepRecord* waited = Find(r.steps, "unmap waits for the kernel");
  ASSERT_NE(waited, nullptr);
  EXPECT_EQ(waited->details[0], (report::Details::value_type{"waited_for_work", true}));
  EXPECT_EQ(Find(r.steps, "the kernel finished its writes")->check->verdict, Verdict::kPass);
}

TEST_F(E2EIsolate, AHungChildIsKilledAtTheLimit) {
  Finished f = Run("scenarios/kernel_timeout.yaml --backend host -q --report " + Path("t.json"));
  ASSERT_EQ(f.exit_code, 0) << f.out;
  EXPECT_LT(f.seconds, 9.0);  // the 10 s kernel was not waited for
  report::Report r = Read("t.json");
  const StepRecord& block = r.steps[0];
  EXPECT_EQ(block.check->expected, "timeout 2s");
  EXPECT_EQ(block.check->actual, "timeout 2s");
  EXPECT_TRUE(block.child->timed_out);
  EXPECT_EQ(block.child->signal, "SIGKILL");
  EXPECT_FALSE(block.child->exit_status.has_value());
  EXPECT_GE(block.wall_us, 2e6);
  const StepRecord* busy = Find(block.body, "ten seconds of work");
  EXPECT_EQ(busy->status, StepStatus::kFailed);
  EXPECT_NE(busy->error.find("still running at the block's limit (2s)"), std::string::npos);
  EXPECT_EQ(Find(block.body, "never reached")->status, StepStatus::kSkipped);
  EXPECT_EQ(Find(r.steps, "the parent's kernel ran")->check->verdict, Verdict::kPass);
}

// Each expectation fails on another outcome, and the run says which (exit 1: a failed check).
TEST_F(E2EIsolate, AnOutcomeOtherThanTheExpectedOneFailsTheBlock) {
  const std::string fault = Write("fault.yaml", R"(name: unexpected_fault
buffers: {Z: {shape: [1024]}}
steps:
  - isolate: {expect: ok}
    name: expects ok
    steps:
      - {op: reserve, buffer: Z}
      - {op: create, alloc: z, size: 2MiB}
      - {op: map, buffer: Z, alloc: z}
      - {op: set_access, buffer: Z}
      - {op: memset, buffer: Z, value: 1}
  - isolate: {expect: CUDA_ERROR_INVALID_VALUE}
    name: expects another error
    steps:
      - {op: reserve, buffer: Z}
      - {op: create, alloc: z, size: 2MiB}
      - {op: map, buffer: Z, alloc: z}
      - {op: set_access, buffer: Z, access: read}
      - {op: fill, buffer: Z, seed: 1}
  - isolate: {expect: ok}
    name: a check fails
    steps:
      - {op: reserve, buffer: Z}
      - {op: create, alloc: z, size: 2MiB}
      - {op: map, buffer: Z, alloc: z}
      - {op: set_access, buffer: Z}
      - {op: memset, buffer: Z, value: 1}
      - {op: check_value, buffer: Z, value: 2}
)");
  Finished f = Run(fault + " --backend host -q --report " + Path("f.json"));
  EXPECT_EQ(f.exit_code, 1) << f.out;
  report::Report r = Read("f.json");
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].check->verdict, Verdict::kPass);
  EXPECT_EQ(r.steps[1].check->actual, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(r.steps[1].check->verdict, Verdict::kFail);
  EXPECT_EQ(r.steps[1].status, StepStatus::kFailed);
  EXPECT_EQ(r.steps[2].check->actual, "check failed");
  EXPECT_EQ(r.summary.checks_failed, 2);
  EXPECT_EQ(r.summary.result, "fail");
}

const char* kLongBlock = R"(name: long_block
buffers: {H: {shape: [1024]}}
steps:
  - isolate: {expect: {signal: SIGSEGV}, kill_after: 60s}
    name: waits for a signal
    steps:
      - {op: reserve, buffer: H}
      - {op: create, alloc: p, size: 2MiB}
      - {op: map, buffer: H, alloc: p}
      - {op: set_access, buffer: H}
      - {op: busy, name: long work, buffer: H, duration: 30s}
  - {op: synchronize, name: after the block}
)";

// The child dies of a signal (sent here, as a crashing driver would raise it): {signal: SIGSEGV}.
TEST_F(E2EIsolate, AChildKilledByTheExpectedSignalPassesTheBlock) {
  const std::string scenario = Write("long.yaml", kLongBlock);
  const std::string log = Path("log.txt");
  const auto start = Clock::now();
  const pid_t pid = Spawn(scenario + " --backend host --report " + Path("s.json"), log);
  const pid_t child = WaitForChild(pid, "__child", std::chrono::seconds(20));
  ASSERT_GT(child, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into `long work`
  kill(child, SIGSEGV);
  Finished f = Wait(pid, start, log);
  EXPECT_EQ(f.exit_code, 0) << f.out;
  EXPECT_LT(f.seconds, 20.0);
  report::Report r = Read("s.json");
  EXPECT_EQ(r.steps[0].check->actual, "signal SIGSEGV");
  EXPECT_EQ(r.steps[0].child->signal, "SIGSEGV");
  EXPECT_EQ(r.steps[0].child->pid, child);
  EXPECT_EQ(Find(r.steps[0].body, "long work")->status, StepStatus::kFailed);
  EXPECT_EQ(r.steps[1].status, StepStatus::kOk);
}

// SIGTERM (or SIGINT) to vmm-run kills the child at once; the report says interrupted and names
// the signal in the block's child record; nothing is left running.
TEST_F(E2EIsolate, StoppingTheParentEndsTheChild) {
  const std::string scenario = Write("long.yaml", kLongBlock);
  for (int sig : {SIGTERM, SIGINT}) {
    const std::string log = Path("log.txt");
    const auto start = Clock::now();
    const pid_t pid = Spawn(scenario + " --backend host --report " + Path("i.json"), log);
    ASSERT_TRUE(WaitForStopHandlers(pid, std::chrono::seconds(20)));
    const pid_t child = WaitForChild(pid, "__child", std::chrono::seconds(20));
    ASSERT_GT(child, 0);
    kill(pid, sig);
    Finished f = Wait(pid, start, log);
    EXPECT_EQ(f.exit_code, 128 + sig) << f.out;
    EXPECT_LT(f.seconds, 20.0);
    EXPECT_TRUE(GoneWithin(child, std::chrono::milliseconds(2000)));
    report::Report r = Read("i.json");
    EXPECT_TRUE(r.summary.interrupted);
    EXPECT_EQ(r.summary.result, "interrupted");
    const StepRecord& block = r.steps[0];
    EXPECT_EQ(block.child->stopped_by, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    EXPECT_EQ(block.child->signal, "SIGKILL");
    EXPECT_EQ(block.check->actual, "interrupted");
    EXPECT_EQ(r.steps[1].status, StepStatus::kSkipped);
  }
}

// A parent that dies without a chance to clean up (SIGKILL) takes the child with it.
TEST_F(E2EIsolate, TheChildDoesNotOutliveAKilledParent) {
  const std::string scenario = Write("long.yaml", kLongBlock);
  const std::string log = Path("log.txt");
  const auto start = Clock::now();
  const pid_t pid = Spawn(scenario + " --backend host -q --report " + Path("k.json"), log);
  const pid_t child = WaitForChild(pid, "__child", std::chrono::seconds(20));
  ASSERT_GT(child, 0);
  kill(pid, SIGKILL);
  Wait(pid, start, log);
  EXPECT_TRUE(GoneWithin(child, std::chrono::milliseconds(3000)));
}

TEST_F(E2EIsolate, DiffAndJUnitNameTheChildsStepsUnderTheBlock) {
  ASSERT_EQ(Run("scenarios/readonly_fault.yaml --backend host -q --report " + Path("base.json") +
                " --junit " + Path("junit.xml"))
                .exit_code,
            0);
  const std::string xml = Text("junit.xml");
  EXPECT_NE(xml.find(R"(name="write through a read-only mapping / reads still work")"),
            std::string::npos)
      << xml;
  // The expected fault is a passing case that says so, not an error.
  EXPECT_NE(xml.find(R"(name="write through a read-only mapping / the write that faults")"),
            std::string::npos);
  EXPECT_NE(xml.find("failed as its isolate block expects: vmm_fill_f32: "
                     "CUDA_ERROR_ILLEGAL_ADDRESS"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find(R"(errors="0")"), std::string::npos);

  // A changed child: its check now fails, before the fault.
  std::ifstream in(VMMRUN_SOURCE_DIR "/scenarios/readonly_fault.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("name: reads still work, buffer: Z, value: 0"), 43,
               "name: reads still work, buffer: Z, value: 9");
  Finished changed =
      Run(Write("readonly_fault.yaml", text) + " --backend host -q --report " + Path("new.json"));
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  Finished d = Run("diff " + Path("base.json") + " " + Path("new.json") +
                   " --config reports/baselines/cross-machine.yaml");
  EXPECT_EQ(d.exit_code, 1) << d.out;
  EXPECT_NE(d.out.find("write through a read-only mapping / reads still work"), std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("actual           CUDA_ERROR_ILLEGAL_ADDRESS  check failed"),
            std::string::npos)
      << d.out;
}

// In-process: one block through the ChildBlockRunner, with a named descriptor handed over (a memfd
// standing in for an exported allocation): the child holds it by name, and afterwards this
// process has exactly the descriptors it had before and no child left, reaped or not.
TEST_F(E2EIsolate, ABlockLeavesNoDescriptorAndNoZombie) {
  const std::string text = R"(name: fds
buffers: {A: {shape: [1024]}}
steps:
  - isolate: {expect: ok}
    steps:
      - {op: reserve, buffer: A}
      - {op: create, alloc: a, size: 2MiB}
      - {op: map, buffer: A, alloc: a}
      - {op: set_access, buffer: A}
      - {op: fill, buffer: A, seed: 1}
)";
  std::vector<Diagnostic> d;
  std::optional<Scenario> scenario = ParseScenario(text, "fds.yaml", &d);
  ASSERT_TRUE(scenario.has_value()) << FormatDiagnostics(d);
  Plan plan = BuildPlan(*scenario, &d);
  ASSERT_TRUE(d.empty()) << FormatDiagnostics(d);
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
  for (int i = 0; i < 3; ++i) {
    StepRecord record;
    Status s = runner.RunBlock(plan.steps[0], {{"kv", memfd}}, record);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(record.check->verdict, Verdict::kPass) << record.check->actual;
    EXPECT_EQ(record.child->fds, std::vector<std::string>{"kv"});
    EXPECT_EQ(record.body.size(), 5u);
    EXPECT_EQ(count_fds(), before) << "after block " << i;
    EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // no child at all: every one was reaped
    EXPECT_EQ(errno, ECHILD);
  }
  close(memfd);
}

// On a GPU (skipped without one): the committed scenarios reach the host twin's verdicts with real
// device faults, the parent's context survives them, and the kernel log names each fault (Xid 31)
// for the child's pid where it can be read (root on the H200; elsewhere the note says why).
TEST_F(E2EIsolate, OnTheGpuTheFaultsAreRealAndTheParentSurvivesThem) {
  struct Case {
    const char* scenario;
    const char* block;
    const char* actual;
    const char* fault;  // the MMU fault type in the Xid line, or nullptr
  };
  const Case cases[] = {
      {"readonly_fault", "write through a read-only mapping", "CUDA_ERROR_ILLEGAL_ADDRESS",
       "FAULT_RO_VIOLATION"},
      {"unmap_race", "unmap without waiting", "CUDA_ERROR_ILLEGAL_ADDRESS", "FAULT_PDE"},
      {"kernel_timeout", "a kernel longer than the limit", "timeout 2s", nullptr},
  };
  for (const Case& c : cases) {
    const std::string report = std::string(c.scenario) + ".cuda.json";
    Finished f = Run("scenarios/" + std::string(c.scenario) + ".yaml --backend cuda --report " +
                     Path(report));
    if (f.exit_code == 3) GTEST_SKIP() << "no CUDA device: " << f.out;
    EXPECT_EQ(f.exit_code, 0) << f.out;
    report::Report r = Read(report);
    const StepRecord* block = Find(r.steps, c.block);
    ASSERT_NE(block, nullptr) << c.scenario;
    EXPECT_EQ(block->check->actual, c.actual) << c.scenario;
    for (const StepRecord& s : r.steps) {  // the parent's own steps, after the fault too
      if (s.op != "isolate") {
        EXPECT_EQ(s.status, StepStatus::kOk) << c.scenario << ": " << s.name;
      }
    }
    if (c.fault == nullptr) continue;
    const report::ChildRecord& child = *block->child;
    std::printf("%s: fault_line_note: %s\n%s\n", c.scenario, child.fault_line_note.c_str(),
                child.fault_line.value_or("(none)").c_str());
    if (child.fault_line_note != "kernel log") continue;  // not readable here: said why
    EXPECT_NE(child.fault_line->find("Xid"), std::string::npos);
    EXPECT_NE(child.fault_line->find("pid=" + std::to_string(child.pid)), std::string::npos);
    EXPECT_NE(child.fault_line->find(c.fault), std::string::npos) << *child.fault_line;
  }
}

}  // namespace
}  // namespace vmm
