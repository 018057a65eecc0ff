// Fault injection over every committed scenario (issue: hostile input and resource limits, item
// 6): each scenario runs once on the host twin to count its engine calls, then once per call with
// that call failing as the driver would (runner/engine/fault_engine.h). Every such run must end
// with exit 4, name the failed step and its injected error, skip every later step, and leave
// nothing behind once the engine is gone: the process's open descriptors and its memfd mappings
// are counted before and after (the host twin's physical memory is memfd; a leaked handle or
// mapping shows up in both).
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "runner/base/exit_code.h"
#include "runner/cli/requirements.h"
#include "runner/engine/fault_engine.h"
#include "runner/engine/host/host_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

int OpenFds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

int MemfdMappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.find("/memfd:") != std::string::npos) ++n;
  return n;
}

// The committed scenarios, with the variables that make the big ones small (the same code paths:
// loops run fewer times).
std::vector<fs::path> Scenarios() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(VMMRUN_SOURCE_DIR) / "scenarios"))
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

struct Loaded {
  std::unique_ptr<Scenario> scenario;
  Plan plan;
};

std::optional<Loaded> Load(const fs::path& path) {
  ExpandOptions options;
  // Shrinks scenarios whose size is a variable (pages_1gib: 512 pages of 2 MiB).
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  if (text.find("pages:") != std::string::npos) options.set.push_back({"pages", "4"});
  std::vector<Diagnostic> diagnostics;
  std::optional<Scenario> scenario = LoadScenarioFile(path.string(), options, &diagnostics);
  if (!scenario) return std::nullopt;
  Loaded loaded;
  loaded.scenario = std::make_unique<Scenario>(std::move(*scenario));
  loaded.plan = BuildPlan(*loaded.scenario, &diagnostics);
  if (!diagnostics.empty()) return std::nullopt;
  return loaded;
}

std::unique_ptr<Engine> HostEngine(const Plan& plan) {
  HostEngineOptions options;
  options.granularity = plan.granularity;
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine(options);
  EXPECT_TRUE(engine.ok()) << engine.status().message();
  return engine.ok() ? std::move(engine).value() : nullptr;
}

TEST(FaultInjection, EveryCallOfEveryScenarioFailsCleanly) {
  int scenarios = 0, runs = 0;
  for (const fs::path& path : Scenarios()) {
    SCOPED_TRACE(path.filename().string());
    std::optional<Loaded> loaded = Load(path);
    ASSERT_TRUE(loaded) << "does not plan";
    // The clean run: how many engine calls, and a scenario this backend can run at all.
    uint64_t calls = 0;
    {
      std::unique_ptr<Engine> host = HostEngine(loaded->plan);
      ASSERT_TRUE(host);
      if (!UnmetRequirement(loaded->scenario->requires_, host->info()).empty()) continue;
      FaultEngine counting(*host, std::nullopt);
      RunOutcome clean = RunPlan(loaded->plan, counting, nullptr);
      if (clean.summary.exit_code != kExitPass && clean.summary.exit_code != kExitCheckFailed)
        continue;  // a scenario that fails on purpose is judged by its baseline, not here
      calls = counting.calls();
    }
    ++scenarios;
    for (uint64_t nth = 1; nth <= calls; ++nth) {
      SCOPED_TRACE("engine call " + std::to_string(nth) + " of " + std::to_string(calls));
      const int fds = OpenFds(), memfds = MemfdMappings();
      {
        std::unique_ptr<Engine> host = HostEngine(loaded->plan);
        ASSERT_TRUE(host);
        FaultEngine faulty(*host, FaultPlan{std::nullopt, nth});
        RunOutcome run = RunPlan(loaded->plan, faulty, nullptr);
        ASSERT_TRUE(faulty.injected());
        ++runs;
        EXPECT_EQ(run.summary.exit_code, kExitStepFailed);
        const int failed = run.summary.failed_step;
        ASSERT_GE(failed, 0);
        ASSERT_LT(static_cast<size_t>(failed), run.steps.size());
        EXPECT_EQ(run.steps[failed].status, report::StepStatus::kFailed);
        EXPECT_NE(run.steps[failed].error.find("(injected fault)"), std::string::npos)
            << run.steps[failed].error;
        for (size_t i = failed + 1; i < run.steps.size(); ++i)
          EXPECT_EQ(run.steps[i].status, report::StepStatus::kSkipped) << "step " << i;
        if (testing::Test::HasFailure()) return;  // one broken path is enough to read
      }
      EXPECT_EQ(OpenFds(), fds) << "a descriptor outlived the engine";
      EXPECT_EQ(MemfdMappings(), memfds) << "a mapping outlived the engine";
      if (testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GE(scenarios, 10);
  std::cout << "fault injection: " << scenarios << " scenarios, " << runs << " runs\n";
}

TEST(FaultInjection, FailsTheNthCallOfOneKindOnly) {
  std::unique_ptr<Engine> host = HostEngine(Plan{});
  ASSERT_TRUE(host);
  FaultEngine faulty(*host, FaultPlan{FaultKind::kCreate, 2});
  AllocHandle a, b, c;
  EXPECT_TRUE(faulty.Create(host->info().granularity_recommended, &a).ok());
  DevicePtr va = 0;
  EXPECT_TRUE(faulty.Reserve(host->info().granularity_recommended, 0, &va).ok());
  Status second = faulty.Create(host->info().granularity_recommended, &b);
  EXPECT_EQ(second.message(), "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY (injected fault)");
  EXPECT_TRUE(faulty.Create(host->info().granularity_recommended, &c).ok());  // only once
  EXPECT_EQ(faulty.calls(FaultKind::kCreate), 3u);
  EXPECT_EQ(faulty.calls(), 4u);
}

}  // namespace
}  // namespace vmm
