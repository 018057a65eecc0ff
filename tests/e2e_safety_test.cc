// End-to-end tests of hostile input, interruptions and report paths (docs/limits-and-safety.md):
// the vmm-run binary as a child process, with its exit status, resource usage and files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "runner/report/report_io.h"
#include "tests/e2e_process_test.h"
#include "tests/scratch_dir.h"
#include "tests/vmm_run_process.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

class E2ESafety : public E2EProcessTest {
 protected:
  E2ESafety() : E2EProcessTest("vmm_e2e_safety") {}
  // Every entry under `sub` (names only), to show what a run left behind.
  std::vector<std::string> Entries(const std::string& sub) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_ / sub)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  const fs::path& dir_ = scratch_.dir();
};

std::string Scenario(const std::string& name, const std::string& extra_steps = "") {
  return "version: 1\nname: " + name +
         "\nbuffers: {A: {shape: [64]}}\nsteps:\n"
         "  - {op: reserve, buffer: A}\n"
         "  - {op: create, alloc: p, size: 2MiB}\n"
         "  - {op: map, buffer: A, alloc: p}\n"
         "  - {op: set_access, buffer: A}\n"
         "  - {op: fill, buffer: A, seed: 1}\n" +
         extra_steps +
         "  - {op: unmap, buffer: A}\n"
         "  - {op: release, alloc: p}\n"
         "  - {op: free, buffer: A}\n";
}

// ---- report paths ----

TEST_F(E2ESafety, ScenarioNamesCannotWriteOutsideTheReportDirectory) {
  fs::create_directories(Path("out"));
  const std::string a = Write("a.yaml", Scenario("'../../escape'"));
  const std::string b = Write("b.yaml", Scenario("/tmp/vmm-absolute"));
  Finished f = Run(a + " " + b + " -q --backend host --report-dir " + Path("out"));
  ASSERT_EQ(f.exit_code, 0) << f.out;
  EXPECT_EQ(Entries("out"),
            (std::vector<std::string>{"_._.._escape.host.json", "_tmp_vmm-absolute.host.json"}));
  EXPECT_FALSE(fs::exists(dir_.parent_path().parent_path() / "escape.host.json"));
  EXPECT_FALSE(fs::exists("/tmp/vmm-absolute.host.json"));
}

TEST_F(E2ESafety, TwoScenariosWithOneReportPathAreAnError) {
  const std::string a = Write("a.yaml", Scenario("same"));
  const std::string b = Write("b.yaml", Scenario("same"));
  Finished f = Run(a + " " + b + " -q --backend host --report-dir " + Path("out"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_NE(f.out.find(b + ": error: the report of scenario 'same' would be written to '" +
                       Path("out") + "/same.host.json', where '" + a +
                       "' already wrote its report in this run; give the scenarios different "
                       "names or run them separately\n"),
            std::string::npos)
      << f.out;
  StatusOr<report::Report> first = report::ReadReport(Path("out/same.host.json"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->scenario_path, a);  // the first report was not overwritten
}

TEST_F(E2ESafety, TheJUnitFileIsNeverAReportsPath) {
  // --junit once replaced the report it named at the end of the run.
  const std::string a = Write("a.yaml", Scenario("junit"));
  Finished f = Run(a + " -q --backend host --report-dir " + Path("out") + " --junit " +
                   Path("out/junit.host.json"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_NE(
      f.out.find(a + ": error: the report of scenario 'junit' would be written to '" + Path("out") +
                 "/junit.host.json', the --junit file, which the run writes "
                 "at its end; give them different paths\n"),
      std::string::npos)
      << f.out;
}

TEST_F(E2ESafety, AFileSizeLimitIsAClearErrorAndLeavesNoTempFile) {
  // Under `ulimit -f` a write past the limit raised SIGXFSZ, which ended the run without a word
  // and left the report's temporary file behind.
  const std::string scenario = Write("s.yaml", Scenario("small"));
  fs::create_directories(dir_ / "out");
  const Finished f =
      Run("run " + scenario + " -q --backend host --report " + Path("out/r.json"), "ulimit -f 4; ");
  EXPECT_EQ(f.exit_code, 4) << f.out;
  EXPECT_NE(f.out.find("cannot write the report"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("File too large"), std::string::npos) << f.out;
  EXPECT_EQ(Entries("out"), std::vector<std::string>{}) << "no report, no temporary file";
}

TEST_F(E2ESafety, RunningOutOfMemoryOnTheInputIsAnInputErrorNotACrash) {
  // 660,000 steps fit the expansion bound but not 200 MB of address space (validate peaks at
  // about 330 MB for them): the expansion's std::bad_alloc used to end as "internal error"
  // (exit 70).
  const std::string scenario = Write("big.yaml",
                                     "name: big\nbuffers: {W: {shape: [1024]}}\nsteps:\n"
                                     "  - for: i\n    in: {range: [0, 330000]}\n    steps:\n"
                                     "      - {op: reserve, buffer: W, size: 2MiB}\n"
                                     "      - {op: free, buffer: W}\n");
  const Finished f = Run("validate " + scenario, "ulimit -v 200000; ");
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_NE(f.out.find("vmm-run: error: out of memory while reading, expanding or checking the "
                       "input; make it smaller"),
            std::string::npos)
      << f.out;
}

TEST_F(E2ESafety, ALimitRaisedOnTheCommandLineHoldsInIsolateChildrenToo) {
  // 70 nested parentheses pass the default expression depth (64) only with --limit, and the
  // isolate block's child, which reads the scenario again, must read it under the same bound.
  const std::string deep = std::string(70, '(') + "2" + std::string(70, ')');
  const std::string scenario = Write("deep.yaml",
                                     "name: deep\nbuffers: {A: {shape: [64]}}\nsteps:\n"
                                     "  - isolate: {expect: ok}\n    steps:\n"
                                     "      - {op: reserve, buffer: A, size: \"${" +
                                         deep +
                                         " * 1MiB}\"}\n"
                                         "      - {op: free, buffer: A}\n");
  const Finished refused = Run("validate " + scenario);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("nested deeper than 64 levels (raise it with --limit "
                             "expression_depth=N; docs/limits-and-safety.md)"),
            std::string::npos)
      << refused.out;
  const Finished ran = Run("run " + scenario +
                           " -q --backend host --limit expression_depth=80 "
                           "--report " +
                           Path("deep.json"));
  EXPECT_EQ(ran.exit_code, 0) << ran.out;
  StatusOr<report::Report> report = report::ReadReport(Path("deep.json"));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->summary.result, "pass");
  const Finished bad = Run("validate " + scenario + " --limit expression_depth=lots");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out,
            "error: --limit expression_depth: expected a whole number greater than 0, got "
            "'lots'\n");
}

TEST_F(E2ESafety, AReportTargetThatIsNotARegularFileIsRefusedBeforeTheRun) {
  const std::string a = Write("a.yaml", Scenario("a"));
  ASSERT_EQ(::mkfifo(Path("fifo.json").c_str(), 0600), 0);
  Finished f = Run(a + " -q --backend host --report " + Path("fifo.json"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_EQ(f.out, a + ": error: '" + Path("fifo.json") +
                       "' is a FIFO (named pipe); vmm-run only replaces regular files: remove it "
                       "or choose another path\n");
  EXPECT_TRUE(fs::is_fifo(Path("fifo.json")));
  f = Run(a + " -q --backend host --report " + Path("r.json") + " --junit " + Path("fifo.json"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_EQ(f.out, "error: --junit: '" + Path("fifo.json") +
                       "' is a FIFO (named pipe); vmm-run only replaces regular files: remove it "
                       "or choose another path\n");
  EXPECT_FALSE(fs::exists(Path("r.json")));  // nothing ran

  Write("elsewhere.json", "keep");
  fs::create_symlink(Path("elsewhere.json"), Path("link.json"));
  f = Run(a + " -q --backend host --report " + Path("link.json"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_NE(f.out.find("is a symbolic link; vmm-run only replaces regular files"),
            std::string::npos)
      << f.out;
}

// ---- bounded inputs ----

TEST_F(E2ESafety, FifosDevicesAndDirectoriesAreRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(Path("pipe.yaml").c_str(), 0600), 0);
  Finished f = Run(Path("pipe.yaml") + " --backend host --report " + Path("r.json"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_LT(f.seconds, 5.0);
  EXPECT_EQ(f.out, Path("pipe.yaml") +
                       ": error: cannot read the file: it is a FIFO (named pipe); expected a "
                       "regular file\n");
  f = Run("validate /dev/zero " + Path("pipe.yaml"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_EQ(f.out,
            "/dev/zero: error: cannot read the file: it is a character device; expected a regular "
            "file\n" +
                Path("pipe.yaml") +
                ": error: cannot read the file: it is a FIFO (named pipe); expected a regular "
                "file\n");
  f = Run("diff " + Path("pipe.yaml") + " " + Path("pipe.yaml"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  f = Run("diff --config " + Path("pipe.yaml") + " reports/baselines/host reports/baselines/host");
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_EQ(f.out, Path("pipe.yaml") +
                       ": error: cannot read the file: it is a FIFO (named pipe); expected a "
                       "regular file\n");
}

TEST_F(E2ESafety, OversizedFilesAreRefusedBeforeTheyAreRead) {
  {
    std::ofstream big(Path("big.yaml"));
    big << "name: big\n";
    big.seekp((16 << 20) + 10);
    big << "\n";
  }
  Finished f = Run("validate " + Path("big.yaml"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_EQ(f.out, Path("big.yaml") +
                       ": error: the file is 16777227 bytes; the limit is 16 MiB (raise it "
                       "with --limit input_bytes=N; docs/limits-and-safety.md)\n");
  EXPECT_LT(f.max_rss_kib, 64 * 1024);
  // Raised, the size passes and the file is read: its NUL bytes are then what is wrong.
  Finished raised = Run("validate " + Path("big.yaml") + " --limit input_bytes=32MiB");
  EXPECT_EQ(raised.exit_code, 2) << raised.out;
  EXPECT_EQ(raised.out.find("the limit is"), std::string::npos) << raised.out;
}

// A 9-level "billion laughs": ~10^9 values if expanded. Refused at the node limit, in well under a
// second of CPU and far under 256 MB.
TEST_F(E2ESafety, AnAliasBombIsRefusedCheaply) {
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p + ", " + p + ", " + p +
            ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + "]\n";
  }
  const std::string path = Write("bomb.yaml", bomb);
  Finished f = Run("validate " + path);
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_NE(f.out.find("error: the document expands to more than 500000 values (check anchors "
                       "and aliases)"),
            std::string::npos)
      << f.out;
  EXPECT_LT(f.cpu_seconds, 1.0);
  EXPECT_LT(f.seconds, 20.0);  // wall clock: only a hang fails here on a loaded machine
  EXPECT_LT(f.max_rss_kib, 256 * 1024);
}

// Inputs of the kind fuzz_scenario found on the two-H200 machine (docs/limits-and-safety.md): each
// refused in well under a second of CPU and under 256 MB. A second `steps:` key whose loop runs
// 4e12 times (the expansion bound must hold for every key, not only the first: it ran past 60 s
// and 8 GB); and loops naming thousands of unknown allocs while thousands of long names are live
// (every message listed every live name and every suggestion compared every pair: 1.8 GB, 10 s).
TEST_F(E2ESafety, LoopsOverUnknownNamesAndDuplicateKeysAreRefusedCheaply) {
  const std::string duplicate = Write("duplicate.yaml",
                                      "name: x\n"
                                      "buffers: {R: {shape: [1024]}}\n"
                                      "steps:\n"
                                      "  - {op: reserve, buffer: R}\n"
                                      "steps:\n"
                                      "  - {for: i, in: {range: [0, 4000000000000]},\n"
                                      "     steps: [{op: release, alloc: \"p${i}\"}]}\n");
  const std::string stem(60, 'x');
  const std::string long_stem(2000, 'y');
  const std::string names =
      Write("names.yaml",
            "name: x\n"
            "vars: {n: 3000}\n"
            "steps:\n"
            "  - {for: i, in: {range: [0, \"${n}\"]}, steps: [{op: create, alloc: \"" +
                stem +
                "${i}\", size: 2MiB}]}\n"
                "  - {for: i, in: {range: [0, \"${n}\"]}, steps: [{op: create, alloc: \"" +
                long_stem +
                "${i}\", size: 2MiB}]}\n"
                "  - {for: i, in: {range: [0, \"${n}\"]}, steps: [{op: release, alloc: \"" +
                stem + "z${i}\"}]}\n");
  for (const std::string& path : {duplicate, names}) {
    Finished f = Run("validate " + path);
    EXPECT_EQ(f.exit_code, 2) << path << "\n" << f.out.substr(0, 2000);
    EXPECT_LT(f.cpu_seconds, 1.0) << path;
    EXPECT_LT(f.seconds, 20.0) << path;  // wall clock: only a hang fails here on a loaded machine
    EXPECT_LT(f.max_rss_kib, 256 * 1024) << path;
    EXPECT_LT(f.out.size(), 64u * 1024) << path;  // messages do not list thousands of names
  }
}

// 100,000 steps from a loop (the scriptable-scenarios issue's bound): the expansion, the plan, the
// run and the report of every step fit in well under 1 GB. About 650 MiB here (2026-12-01); it was
// 920 MiB while every location held its own copies of the path and the loop context (72 bytes
// each, plus the path on the heap), so the bound is 800 MiB.
TEST_F(E2ESafety, AHundredThousandStepsRunInUnderOneGigabyte) {
  const std::string path = Write("many.yaml",
                                 "name: many\n"
                                 "buffers: {A: {shape: [1024]}}\n"
                                 "steps:\n"
                                 "  - {op: reserve, buffer: A}\n"
                                 "  - {op: create, alloc: p, size: 2MiB}\n"
                                 "  - {op: map, buffer: A, alloc: p}\n"
                                 "  - for: i\n"
                                 "    in: {range: [0, 99994]}\n"
                                 "    steps: [{op: set_access, buffer: A}]\n"
                                 "  - {op: unmap, buffer: A}\n"
                                 "  - {op: release, alloc: p}\n"
                                 "  - {op: free, buffer: A}\n");
  Finished f = Run("run " + path + " --backend host -q --report " + Path("many.json"));
  EXPECT_EQ(f.exit_code, 0) << f.out;
  EXPECT_NE(f.out.find("100000 steps (100000 ok"), std::string::npos) << f.out;
  EXPECT_LT(f.max_rss_kib, 800 * 1024);
  std::cout << "100,000 steps: max RSS " << f.max_rss_kib / 1024 << " MiB, " << f.cpu_seconds
            << " s of CPU\n";
}

TEST_F(E2ESafety, DeeplyNestedReportsAreBadInputForDiff) {
  Write("deep.json", std::string(200000, '['));
  Finished f = Run("diff reports/baselines/host/reuse.json " + Path("deep.json"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
  EXPECT_EQ(f.out, "error: " + Path("deep.json") +
                       ":1:65: invalid JSON: arrays and objects are nested deeper than 64 "
                       "levels\n");
  Write("big.json", "{\"schema_version\": 6e906}");
  f = Run("diff reports/baselines/host/reuse.json " + Path("big.json"));
  EXPECT_EQ(f.exit_code, 2) << f.out;
}

// ---- signals ----

const char* kLongRun = R"(version: 1
name: long
buffers: {A: {shape: [1048576]}}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p, size: 4MiB}
  - {op: map, buffer: A, alloc: p}
  - {op: set_access, buffer: A}
  - {op: fill, name: long fill, buffer: A, seed: 1, repeat: 100000}
  - {op: fill, name: after, buffer: A, seed: 2}
  - {op: unmap, buffer: A}
  - {op: release, alloc: p}
  - {op: free, buffer: A}
)";

void ExpectInterruptedReport(const std::string& path, int signal_number) {
  StatusOr<report::Report> r = report::ReadReport(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->summary.interrupted);
  EXPECT_EQ(r->summary.signal, signal_number);
  EXPECT_EQ(r->summary.exit_code, 128 + signal_number);
  EXPECT_EQ(r->summary.result, "interrupted");
  EXPECT_EQ(r->summary.stopped_at_step, 5);  // the signal came during `long fill`
  ASSERT_EQ(r->steps.size(), 9u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(r->steps[i].status, report::StepStatus::kOk) << i;
  for (int i = 5; i < 9; ++i) EXPECT_EQ(r->steps[i].status, report::StepStatus::kSkipped) << i;
  ASSERT_TRUE(r->steps[4].wall_stats.has_value());
  EXPECT_LT(r->steps[4].wall_stats->count, 100000u);
}

TEST_F(E2ESafety, SigintAndSigtermStopAtAStepBoundaryWithAReport) {
  const std::string scenario = Write("long.yaml", kLongRun);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    fs::remove_all(Path("out"));
    fs::create_directories(Path("out"));
    Write("out/long.host.json", "an older report");
    const std::string log = Path("log.txt");
    const auto start = Clock::now();
    const pid_t pid = Spawn(scenario + " --backend host --report-dir " + Path("out"), log);
    ASSERT_TRUE(WaitForStopHandlers(pid, std::chrono::seconds(20)));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into `long fill`
    kill(pid, sig);
    Finished f = Wait(pid, start, log);
    EXPECT_EQ(f.exit_code, 128 + sig) << f.out;
    EXPECT_NE(f.out.find("result: INTERRUPTED"), std::string::npos) << f.out;
    EXPECT_NE(f.out.find("vmm-run: stopped by " + std::string(sig == SIGINT    ? "SIGINT"
                                                              : sig == SIGTERM ? "SIGTERM"
                                                                               : "SIGHUP")),
              std::string::npos)
        << f.out;
    EXPECT_EQ(Entries("out"), std::vector<std::string>{"long.host.json"});  // no temp file
    ExpectInterruptedReport(Path("out/long.host.json"), sig);
  }
}

// A second signal exits at once. Whichever moment it lands in, no temp file is left and the older
// report never remains: either the interrupted report replaced it, or it was removed when the run
// started.
TEST_F(E2ESafety, ASecondSignalExitsAtOnce) {
  const std::string scenario = Write("long.yaml", kLongRun);
  fs::create_directories(Path("out"));
  Write("out/long.host.json", "an older report");
  const std::string log = Path("log.txt");
  const auto start = Clock::now();
  const pid_t pid = Spawn(scenario + " --backend host --report-dir " + Path("out"), log);
  ASSERT_TRUE(WaitForStopHandlers(pid, std::chrono::seconds(20)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  kill(pid, SIGTERM);
  Finished f = Wait(pid, start, log);
  // Two pending signals may be delivered in either order, and the first one's report may or may
  // not be complete when the second lands.
  ASSERT_TRUE(f.exit_code == 143 || f.exit_code == 130) << f.exit_code << "\n" << f.out;
  const std::vector<std::string> left = Entries("out");
  if (!left.empty()) {
    EXPECT_EQ(left, std::vector<std::string>{"long.host.json"});
    StatusOr<report::Report> r = report::ReadReport(Path("out/long.host.json"));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->summary.interrupted);
  }
}

// The interrupted report reads as such in diff (a regression) and in JUnit (an error testcase).
TEST_F(E2ESafety, DiffAndJUnitShowAnInterruptedRun) {
  const std::string scenario = Write("long.yaml", kLongRun);
  const std::string log = Path("log.txt");
  const auto start = Clock::now();
  const pid_t pid = Spawn(scenario + " -q --backend host --report " + Path("new.json") +
                              " --junit " + Path("junit.xml"),
                          log);
  ASSERT_TRUE(WaitForStopHandlers(pid, std::chrono::seconds(20)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  Finished f = Wait(pid, start, log);
  ASSERT_EQ(f.exit_code, 130) << f.out;
  std::ifstream junit(Path("junit.xml"));
  std::ostringstream xml;
  xml << junit.rdbuf();
  EXPECT_NE(xml.str().find(R"(<testcase classname="long" name="interrupted")"), std::string::npos)
      << xml.str();
  EXPECT_NE(xml.str().find(R"(message="interrupted by SIGINT before step 5)"), std::string::npos);

  // A complete run of the same scenario as the base: a short one (repeat 1) with the same name.
  std::string quick = kLongRun;
  quick.replace(quick.find("repeat: 100000"), 14, "repeat: 2");
  Finished base =
      Run(Write("quick.yaml", quick) + " -q --backend host --report " + Path("base.json"));
  ASSERT_EQ(base.exit_code, 0) << base.out;
  // Read as JSON: the table's column widths change with the rows a run happens to produce (timing
  // rows on a loaded machine), so its spacing is not what this test is about.
  Finished d = Run("diff --json " + Path("base.json") + " " + Path("new.json"));
  EXPECT_EQ(d.exit_code, 1) << d.out;
  const nlohmann::json doc = nlohmann::json::parse(d.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << d.out;
  bool found = false;
  for (const nlohmann::json& row : doc["rows"])
    found |= row["kind"] == "regression" && row["scenario"] == "long" &&
             row["field"] == "interrupted" && row["new"] == "SIGINT before step 5";
  EXPECT_TRUE(found) << d.out;
}

}  // namespace
}  // namespace vmm
