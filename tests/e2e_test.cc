// End-to-end tests of the vmm-run binary: exit codes, console output and the reports it writes,
// on the host backend (or whatever `auto` picks on this machine).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runner/base/input_file.h"
#include "runner/report/report_io.h"
#include "tests/scratch_dir.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs vmm-run with `args` from the source directory (so scenario paths are relative).
// Runs vmm-run with `args` from the source tree; `env` ("NAME=value ...") is set for it alone.
Result RunTool(const std::string& args, const std::string& env = "") {
  std::string command =
      "cd '" VMMRUN_SOURCE_DIR "' && " + env + " '" VMMRUN_BINARY "' " + args + " 2>&1";
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.out.append(buf.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class E2E : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return scratch_.Path(name); }

  ScratchDir scratch_{"vmm_e2e"};
  const fs::path& dir_ = scratch_.dir();
};

TEST_F(E2E, ReuseRunsToAPassOnTheHostBackend) {
  Result r = RunTool("scenarios/reuse.yaml --backend host --report " + Path("reuse.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("backend: host (requested with --backend host)"), std::string::npos);
  EXPECT_NE(r.out.find("same: YES"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("equal: NO"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: PASS"), std::string::npos) << r.out;
  StatusOr<report::Report> report = report::ReadReport(Path("reuse.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->scenario_name, "reuse");
  EXPECT_EQ(report->backend, "host");
  EXPECT_EQ(report->summary.exit_code, 0);
  EXPECT_EQ(report->summary.checks_failed, 0);
  EXPECT_EQ(report->summary.checks_passed, 5);  // 2 matmul, 2 address, 1 differ
  EXPECT_EQ(report->scenario_sha256.size(), 64u);
  for (const report::StepRecord& step : report->steps) {
    EXPECT_EQ(step.status, report::StepStatus::kOk) << step.name;
    if (step.op == "check_matmul") {
      ASSERT_TRUE(step.check.has_value());
      EXPECT_EQ(step.check->mismatch_count, 0u);
    }
  }
}

// Observe, then pin, as a user explores: a block that observes a fault, run; pin writes the fault
// into the scenario; the pinned scenario passes on its exact expectation, one that expects another
// step fails, and pinning again finds nothing left to observe.
TEST_F(E2E, ObserveThenPinThenTheScenarioJudges) {
  const std::string file = scratch_.Write("explore.yaml", R"(name: explore
buffers: {K: {shape: [524288]}}
steps:
  - isolate: {expect: observe}
    name: what a write without access does
    steps:
      - {op: reserve, buffer: K}
      - {op: create, alloc: p, size: 2MiB}
      - {op: map, buffer: K, alloc: p}
      - {op: memset, name: the write, buffer: K, value: 1}
)");
  Result observed = RunTool(file + " --backend host -q --report " + Path("explore.json"));
  ASSERT_EQ(observed.exit_code, 0) << observed.out;  // observing never fails
  Result pin = RunTool("pin " + Path("explore.json") + " --in-place");
  ASSERT_EQ(pin.exit_code, 0) << pin.out;
  EXPECT_NE(pin.out.find("pinned 1 observation(s) in " + file), std::string::npos) << pin.out;
  StatusOr<std::string> read = ReadInputFile(file, Limit::kInputBytes);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const std::string pinned = *read;
  EXPECT_NE(pinned.find("isolate: {expect: CUDA_ERROR_ILLEGAL_ADDRESS, at: the write}"),
            std::string::npos)
      << pinned;
  EXPECT_EQ(RunTool(file + " --backend host -q --report " + Path("pinned.json")).exit_code, 0);
  std::string wrong = pinned;
  wrong.replace(wrong.find("at: the write"), 13, "at: map K");  // the map does not fault
  EXPECT_EQ(RunTool(scratch_.Write("wrong.yaml", wrong) + " --backend host -q --report " +
                    Path("wrong.json"))
                .exit_code,
            1);
  Result again = RunTool("pin " + Path("pinned.json"));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.out.find("no step with expect_error: observe; nothing to pin"), std::string::npos)
      << again.out;
}

TEST_F(E2E, TwoDeviceScenarioRunsOnTwoEmulatedDevicesAndIsSkippedOnOne) {
  Result r =
      RunTool("scenarios/striped_vector_add.yaml --backend host --report " + Path("two.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  StatusOr<report::Report> report = report::ReadReport(Path("two.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->devices.size(), 2u);
  EXPECT_EQ(report->devices[0].scenario_device, 0);
  EXPECT_EQ(report->devices[1].scenario_device, 1);
  EXPECT_EQ(report->devices[1].ordinal, 1);
  EXPECT_EQ(report->devices[1].pci_bus_id, "host");
  // `--device 1` swaps the roles: the scenario's device 0 is ordinal 1.
  r = RunTool("scenarios/striped_vector_add.yaml --backend host --device 1 -q --report " +
              Path("swapped.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  report = report::ReadReport(Path("swapped.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->devices.size(), 2u);
  EXPECT_EQ(report->devices[0].ordinal, 1);
  EXPECT_EQ(report->devices[1].ordinal, 0);
  // One device: `requires: {devices: 2}` is not met, so the run is skipped (exit 5), not failed.
  r = RunTool("scenarios/striped_vector_add.yaml --backend host --host-devices 1 -q --report " +
              Path("one.json"));
  EXPECT_EQ(r.exit_code, 5) << r.out;
  report = report::ReadReport(Path("one.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->summary.result, "skipped");
  EXPECT_EQ(report->summary.skip_reason, "requires 2 devices; this host backend has 1");
  ASSERT_EQ(report->devices.size(), 1u);
  // A device the twin does not emulate is unavailable (exit 3).
  r = RunTool("scenarios/reuse.yaml --backend host --device 2 -q --report " + Path("no.json"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("no host device 2: the host twin has 2 (--host-devices 2)"),
            std::string::npos)
      << r.out;
}

// VMMRUN_HOST_MEMORY caps the memory the host twin emulates: a scenario that needs more is
// skipped (exit 5) whatever this machine's RAM, and a value that is not a size is an input error.
TEST_F(E2E, HostMemoryFromTheEnvironmentCapsTheTwin) {
  Result r = RunTool("scenarios/vector_add.yaml --backend host -q --report " + Path("v.json"),
                     "VMMRUN_HOST_MEMORY=64MiB");
  EXPECT_EQ(r.exit_code, 0) << r.out;  // it creates 16 MiB
  StatusOr<report::Report> report = report::ReadReport(Path("v.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->devices.at(0).total_memory, 64u << 20);
  r = RunTool("scenarios/vector_add.yaml --backend host --report " + Path("small.json"),
              "VMMRUN_HOST_MEMORY=8MiB");
  EXPECT_EQ(r.exit_code, 4) << r.out;  // the twin refuses what it does not have, as a GPU does
  EXPECT_NE(r.out.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << r.out;
  r = RunTool("scenarios/data_plane_16g.yaml --backend host -q --report " + Path("d.json"),
              "VMMRUN_HOST_MEMORY=1GiB");
  EXPECT_EQ(r.exit_code, 5) << r.out;
  EXPECT_NE(r.out.find("requires 48 GiB of device memory; host CPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("has 1 GiB"), std::string::npos) << r.out;
  r = RunTool("scenarios/reuse.yaml --backend host -q --report " + Path("r.json"),
              "VMMRUN_HOST_MEMORY=lots");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("VMMRUN_HOST_MEMORY='lots' is not a size; give one such as 16GiB"),
            std::string::npos)
      << r.out;
}

TEST_F(E2E, GraphUpdateRunsToAPassAndReportsTheUpdateCode) {
  Result r = RunTool("scenarios/graph_update.yaml --backend host --report " + Path("g.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("result success (expected success)"), std::string::npos) << r.out;
  StatusOr<report::Report> report = report::ReadReport(Path("g.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  bool saw_update = false;
  for (const report::StepRecord& step : report->steps) {
    if (step.op != "update") continue;
    saw_update = true;
    ASSERT_TRUE(step.check.has_value());
    EXPECT_EQ(step.check->actual, "success");
    ASSERT_TRUE(step.wall_stats.has_value());
    EXPECT_EQ(step.wall_stats->count, 20u);
  }
  EXPECT_TRUE(saw_update);
}

TEST_F(E2E, DefaultSubcommandAndDefaultReportDirectory) {
  Result r =
      RunTool("scenarios/update_topology.yaml -q --backend host --report-dir " + Path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(Path("out/update_topology.host.json"))) << r.out;
  EXPECT_EQ(r.out.find("   0  "), std::string::npos) << "--quiet printed steps:\n" << r.out;
}

TEST_F(E2E, FailedCheckExitsOneAndKeepsRunning) {
  Result r = RunTool("tests/data/check_fails.yaml --backend host --report " + Path("f.json"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  StatusOr<report::Report> report = report::ReadReport(Path("f.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->summary.result, "fail");
  EXPECT_EQ(report->summary.checks_failed, 1);
  EXPECT_EQ(report->steps.back().status, report::StepStatus::kOk);  // the run went on
}

TEST_F(E2E, FatalCheckSkipsTheRest) {
  Result r = RunTool("tests/data/fatal_check.yaml --backend host --report " + Path("f.json"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  StatusOr<report::Report> report = report::ReadReport(Path("f.json"));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->steps.back().status, report::StepStatus::kSkipped);
  EXPECT_EQ(report->summary.skipped, 1);
}

TEST_F(E2E, RuntimeFailureExitsFourAndNamesTheStep) {
  Result r = RunTool("tests/data/runtime_failure.yaml --backend host --report " + Path("r.json"));
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("one pebibyte"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAILED: cuMemCreate"), std::string::npos) << r.out;
  StatusOr<report::Report> report = report::ReadReport(Path("r.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->summary.failed_step, 4);
  EXPECT_EQ(report->summary.result, "error");
  EXPECT_EQ(report->steps[4].status, report::StepStatus::kFailed);
  EXPECT_EQ(report->steps[5].status, report::StepStatus::kSkipped);
}

TEST_F(E2E, BadScenarioExitsTwoAndRunsNothing) {
  Result r =
      RunTool("tests/bad_inputs/undeclared_buffer.yaml --backend host --report " + Path("b.json"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("tests/bad_inputs/undeclared_buffer.yaml:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing was run"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("b.json")));
}

TEST_F(E2E, ValidateAcceptsEveryScenarioAndRejectsBadOnes) {
  Result good = RunTool("validate scenarios/reuse.yaml scenarios/graph_update.yaml");
  EXPECT_EQ(good.exit_code, 0) << good.out;
  EXPECT_NE(good.out.find("scenarios/reuse.yaml: ok"), std::string::npos) << good.out;
  Result bad = RunTool("validate scenarios/reuse.yaml tests/bad_inputs/undeclared_buffer.yaml");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

TEST_F(E2E, ValijsonCrossCheckAgreesWithTheValidator) {
  Result good = RunTool("validate --valijson scenarios/reuse.yaml scenarios/graph_update.yaml");
  EXPECT_EQ(good.exit_code, 0) << good.out;
  EXPECT_NE(good.out.find("scenarios/reuse.yaml: valijson accepts the file"), std::string::npos)
      << good.out;
  Result bad = RunTool("validate --valijson tests/bad_inputs/unknown_op.yaml");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("unknown_op.yaml: valijson rejects the file"), std::string::npos)
      << bad.out;
  EXPECT_EQ(bad.out.find("disagreement"), std::string::npos) << bad.out;
}

TEST_F(E2E, UsageErrorsExitTwo) {
  EXPECT_EQ(RunTool("run scenarios/reuse.yaml --backend gpu").exit_code, 2);
  EXPECT_EQ(RunTool("run does/not/exist.yaml").exit_code, 2);
  EXPECT_EQ(RunTool("frobnicate").exit_code, 2);
  Result two = RunTool("run scenarios/reuse.yaml scenarios/graph_update.yaml --report x.json");
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.out.find("use --report-dir instead"), std::string::npos) << two.out;
}

TEST_F(E2E, StepsDocumentsEveryOp) {
  Result r = RunTool("steps");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* op :
       {"reserve",     "free",         "create",      "release",       "map",
        "set_access",  "unmap",        "fill",        "matmul",        "capture",
        "instantiate", "replay",       "update",      "destroy_graph", "destroy_exec",
        "snapshot",    "check_matmul", "check_equal", "check_address", "check_kernel_params",
        "synchronize", "busy",         "signal",      "wait_for",      "threads"}) {
    EXPECT_NE(r.out.find(op), std::string::npos) << op;
  }
  EXPECT_NE(r.out.find("isolate (a block, written {isolate: {expect: ...}, steps: [...]})"),
            std::string::npos)
      << r.out;
  Result block = RunTool("steps isolate");
  EXPECT_EQ(block.exit_code, 0);
  EXPECT_NE(block.out.find("isolate.kill_after"), std::string::npos) << block.out;
  // The groups each have their words: the threads group with a thread's own keys.
  Result threads = RunTool("steps threads");
  EXPECT_EQ(threads.exit_code, 0);
  EXPECT_NE(threads.out.find("threads (a group, written {threads: [{thread: NAME"),
            std::string::npos)
      << threads.out;
  EXPECT_NE(threads.out.find("  thread   string, required"), std::string::npos) << threads.out;
  EXPECT_NE(threads.out.find("  context  current | none, default current"), std::string::npos)
      << threads.out;
  EXPECT_EQ(RunTool("steps together").exit_code, 0);
  EXPECT_EQ(RunTool("steps mapp").exit_code, 2);
}

// Without a GPU, --backend cuda must exit 3 and auto must fall back to host, saying why.
TEST_F(E2E, CudaBackendUnavailableWithoutAGpu) {
  Result auto_run = RunTool("scenarios/reuse.yaml -q --report " + Path("a.json"));
  ASSERT_EQ(auto_run.exit_code, 0) << auto_run.out;
  StatusOr<report::Report> report = report::ReadReport(Path("a.json"));
  ASSERT_TRUE(report.ok());
  if (report->backend == "cuda")
    GTEST_SKIP() << "a CUDA device is present: " << report->device.name;
  EXPECT_NE(report->backend_reason.find("auto: "), std::string::npos) << report->backend_reason;
  Result cuda = RunTool("scenarios/reuse.yaml --backend cuda --report " + Path("c.json"));
  EXPECT_EQ(cuda.exit_code, 3) << cuda.out;
  EXPECT_NE(cuda.out.find("cuda backend unavailable"), std::string::npos) << cuda.out;
  EXPECT_FALSE(fs::exists(Path("c.json")));
}

}  // namespace
}  // namespace vmm

namespace vmm {
namespace {

TEST_F(E2E, ExpandPrintsTheScenarioAsItWillRun) {
  Result r = RunTool("expand tests/data/expand/paged.yaml --set n=1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out,
            "# tests/data/expand/paged.yaml expanded by vmm-run expand: 8 top-level steps; vars: "
            "n=1, page=2097152\n"
            "name: paged\n"
            "buffers:\n"
            "  W: {shape: [524288]}\n"
            "steps:\n"
            "  - {op: reserve, buffer: W, size: 8388608}\n"
            "  - {op: create, alloc: W0, size: 2097152}\n"
            "  - {op: map, buffer: W, alloc: W0, offset: 0}\n"
            "  - {op: set_access, buffer: W, size: 2097152}\n"
            "  - {op: fill, buffer: W, seed: 3}\n"
            "  - {op: unmap, buffer: W, size: 2097152}\n"
            "  - {op: release, alloc: W0}\n"
            "  - {op: free, buffer: W}\n");
}

TEST_F(E2E, ErrorsInALoopPointAtTheTemplateAndTheIteration) {
  Result r = RunTool("validate tests/data/expand/loop_error.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out,
            "tests/data/expand/loop_error.yaml:9:30: error: unknown alloc 'p2', did you mean "
            "'p1'? (in for i = 1; 2 more like it)\n");
  Result e = RunTool("expand tests/data/expand/loop_error.yaml");
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_EQ(e.out, r.out);
}

TEST_F(E2E, ExpandingTheExpandedScenarioGivesItBack) {
  // A literal "${" (written "$${") and a var whose value holds a line break: the output must be
  // a scenario whose own expansion is itself, and the header comment must stay one line.
  std::ofstream(Path("esc.yaml"))
      << "name: esc\n"
         "vars: {note: \"a\\nname: injected\"}\n"
         "description: \"costs $${price}, $$${x}\"\n"
         "buffers: {W: {shape: [1024]}}\n"
         "steps:\n"
         "  - {op: reserve, buffer: W, size: 2MiB, name: \"lit $${x}\"}\n"
         "  - {op: free, buffer: W}\n";
  Result once = RunTool("expand " + Path("esc.yaml") + " > " + Path("once.yaml"));
  ASSERT_EQ(once.exit_code, 0) << once.out;
  Result twice = RunTool("expand " + Path("once.yaml") + " > " + Path("twice.yaml"));
  ASSERT_EQ(twice.exit_code, 0) << twice.out;
  auto body = [](const std::string& path) {
    std::ifstream in(path);
    std::string header, rest, line;
    std::getline(in, header);
    while (std::getline(in, line)) rest += line + "\n";
    return std::make_pair(header, rest);
  };
  const auto [once_header, once_body] = body(Path("once.yaml"));
  EXPECT_NE(once_header.find("vars: note=a\\nname: injected"), std::string::npos) << once_header;
  EXPECT_EQ(once_body.find("name: injected"), std::string::npos) << once_body;
  EXPECT_NE(once_body.find("description: \"costs $${price}, $$${x}\""), std::string::npos)
      << once_body;
  EXPECT_EQ(body(Path("twice.yaml")).second, once_body);
}

TEST_F(E2E, SetOverridesVarsAndTheReportRecordsThem) {
  Result r = RunTool("run tests/data/expand/paged.yaml --backend host -q --set n=1 --report " +
                     Path("p.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  StatusOr<report::Report> report = report::ReadReport(Path("p.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->vars.size(), 2u);
  EXPECT_EQ(report->vars[0], (std::pair<std::string, std::string>{"n", "1"}));
  EXPECT_EQ(report->vars[1], (std::pair<std::string, std::string>{"page", "2097152"}));
  EXPECT_EQ(report->steps.size(), 8u);

  Result unknown = RunTool("validate tests/data/expand/paged.yaml --set pages=4");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.out,
            "tests/data/expand/paged.yaml: error: --set pages: the scenario has no variable "
            "'pages', did you mean 'page'?\n");
  Result malformed = RunTool("expand tests/data/expand/paged.yaml --set n");
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_EQ(malformed.out,
            "error: --set expects NAME=VALUE (a variable of the scenario's 'vars:'), got 'n'\n");
}

TEST_F(E2E, SweepRunsEveryPointAndWritesItsTable) {
  Result r =
      RunTool("run tests/data/expand/sweep.yaml --backend host -q --report-dir " + Path("a"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep 'page_sweep': 4 points, median wall time per op (us)\n"
                       "page  pages  result  reserve_us  create_us  map_us  set_access_us"),
            std::string::npos)
      << r.out;
  for (const char* point :
       {"page=2MiB,pages=1", "page=2MiB,pages=2", "page=4MiB,pages=1", "page=4MiB,pages=2"}) {
    StatusOr<report::Report> report =
        report::ReadReport(Path("a/page_sweep." + std::string(point) + ".host.json"));
    ASSERT_TRUE(report.ok()) << point << ": " << report.status().message();
    EXPECT_EQ(report->sweep_point.size(), 2u);
  }
  std::ifstream csv(Path("a/page_sweep.sweep.host.csv"));
  std::string header;
  std::getline(csv, header);
  // Per op: calls timed, min, p50, p99, max.
  std::string want = "page,pages,result";
  for (const char* op : {"reserve", "create", "map", "set_access", "unmap", "release", "free"})
    for (const char* column : {"_n", "_min_us", "_p50_us", "_p99_us", "_max_us"})
      want += std::string(",") + op + column;
  EXPECT_EQ(header, want);
  std::ifstream md(Path("a/page_sweep.sweep.host.md"));
  std::string md_header, md_rule, md_row;
  std::getline(md, md_header);
  std::getline(md, md_rule);
  std::getline(md, md_row);
  EXPECT_EQ(md_header.rfind("| page | pages | result | reserve_n | reserve_min_us | reserve_p50_us "
                            "| reserve_p99_us | reserve_max_us | create_n |",
                            0),
            0u)
      << md_header;
  EXPECT_EQ(
      md_rule, "|" + [] {
        std::string cells;
        for (int i = 0; i < 3 + 7 * 5; ++i) cells += "---|";
        return cells;
      }());
  EXPECT_EQ(md_row.rfind("| 2MiB | 1 | pass | ", 0), 0u) << md_row;
  // A second run pairs with the first point by point.
  ASSERT_EQ(RunTool("run tests/data/expand/sweep.yaml --backend host -q --report-dir " + Path("b"))
                .exit_code,
            0);
  Result diff = RunTool("diff " + Path("a") + " " + Path("b") +
                        " --config reports/baselines/cross-machine.yaml");
  EXPECT_EQ(diff.exit_code, 0) << diff.out;
  EXPECT_NE(diff.out.find("4 scenarios, 34 steps compared: 0 regressions, 0 improvements, 0 "
                          "missing, 0 added, 0 ambiguous"),
            std::string::npos)
      << diff.out;
  Result valid = RunTool("validate tests/data/expand/sweep.yaml");
  EXPECT_EQ(valid.exit_code, 0) << valid.out;
  EXPECT_EQ(valid.out,
            "tests/data/expand/sweep.yaml: ok · scenario 'page_sweep' · 7 steps · granularity 2 "
            "MiB · 4 sweep points valid\n");
  Result bad = RunTool("validate tests/data/expand/bad_sweep.yaml");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out,
            "tests/data/expand/bad_sweep.yaml: at sweep point page=3MiB:\n"
            "tests/data/expand/bad_sweep.yaml:6:36: error: 'size' 3 MiB is not a multiple of the "
            "granularity (2 MiB)\n");
  Result one = RunTool("run tests/data/expand/sweep.yaml --backend host -q --report x.json");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_EQ(one.out,
            "tests/data/expand/sweep.yaml: error: --report names one file but the sweep has 4 "
            "points; use --report-dir instead\n");
}

TEST_F(E2E, ASweepRemovesItsEarlierReportsBeforeItsFirstPointRuns) {
  // An earlier run left a report for the point that no longer validates: it must not survive
  // looking current next to this run's reports.
  std::filesystem::create_directories(Path("s"));
  const std::string stale = Path("s/bs.page=3MiB.host.json");
  std::ofstream(stale) << "{}";
  Result r =
      RunTool("run tests/data/expand/bad_sweep.yaml --backend host -q --report-dir " + Path("s"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_FALSE(std::filesystem::exists(stale)) << r.out;
  EXPECT_TRUE(std::filesystem::exists(Path("s/bs.page=2MiB.host.json"))) << r.out;
}

TEST_F(E2E, PagesScenarioExpandsTo1543Steps) {
  Result r = RunTool("validate scenarios/pages_1gib.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out,
            "scenarios/pages_1gib.yaml: ok · scenario 'pages_1gib' · 1543 steps · granularity 2 "
            "MiB\n");
}

}  // namespace
}  // namespace vmm
