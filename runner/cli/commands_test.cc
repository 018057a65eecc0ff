// The subcommands called as functions, with their streams: output and exit codes of run,
// validate, steps and diff without spawning the binary (runner/base/exit_code.h is the table).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/base/exit_code.h"
#include "runner/cli/diff_command.h"
#include "runner/cli/import_snapshot_command.h"
#include "runner/cli/reduce_command.h"
#include "runner/cli/run_command.h"
#include "runner/cli/steps_command.h"
#include "runner/cli/validate_command.h"
#include "tests/scratch_dir.h"

namespace vmm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPassing = R"(name: pass
buffers: {A: {shape: [1024]}}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p, size: 2MiB}
  - {op: map, name: m1, buffer: A, alloc: p}
  - {op: set_access, buffer: A}
  - {op: fill, buffer: A, seed: 1}
  - {op: snapshot, buffer: A, snapshot: s}
  - {op: check_equal, buffer: A, snapshot: s}
  - {op: unmap, buffer: A}
  - {op: release, alloc: p}
  - {op: free, buffer: A}
)";

class CommandsTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    return scratch_.Write(name, text);
  }
  int Run(std::vector<std::string> files) {
    RunOptions options;
    options.files = std::move(files);
    options.backend = "host";
    options.report_dir = (dir_ / "reports").string();
    options.quiet = true;
    return RunRunCommand(options, out_, err_);
  }
  ScratchDir scratch_{"vmm_cmd"};
  const fs::path& dir_ = scratch_.dir();
  std::ostringstream out_, err_;
};

TEST_F(CommandsTest, RunPassesAndWritesItsSummaryToTheGivenStream) {
  EXPECT_EQ(Run({Write("pass.yaml", kPassing)}), kExitPass) << err_.str();
  EXPECT_NE(out_.str().find("result: PASS · pass · 10 steps"), std::string::npos) << out_.str();
  EXPECT_EQ(err_.str(), "");
  EXPECT_TRUE(fs::exists(dir_ / "reports" / "pass.host.json"));
}

TEST_F(CommandsTest, RunFailedCheckIsOneAndScenarioErrorIsTwo) {
  std::string failing = kPassing;
  failing.replace(failing.find("name: pass"), 10, "name: fail");
  failing.replace(failing.find("snapshot: s}\n  - {op: unmap"), 12,
                  "snapshot: s, expect: different}");
  EXPECT_EQ(Run({Write("fail.yaml", failing)}), kExitCheckFailed) << err_.str();
  const std::string bad = Write("bad.yaml", "name: bad\nsteps:\n  - {op: mapp}\n");
  EXPECT_EQ(Run({bad}), kExitInputError);
  EXPECT_NE(err_.str().find(bad + ":3:10: error: unknown op 'mapp', did you mean 'map'?"),
            std::string::npos)
      << err_.str();
}

// reduce: a failing check among steps it does not need comes out with what it needs, written
// with a header that says what was kept; a passing scenario, or -o onto the scenario, is exit 2.
TEST_F(CommandsTest, ReduceWritesASmallerScenarioThatFailsTheSameWay) {
  std::string failing = kPassing;
  failing.replace(failing.find("snapshot: s}\n  - {op: unmap"), 12,
                  "snapshot: s, expect: different}");
  const std::string file = Write("fail.yaml", failing);
  ReduceCommandOptions options;
  options.file = file;
  options.out = (dir_ / "small.yaml").string();
  options.backend = "host";
  ASSERT_EQ(RunReduceCommand(options, out_, err_), kExitPass) << err_.str();
  EXPECT_NE(out_.str().find("outcome kept: exit 1 at check_equal: expected different, got equal"),
            std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("reduced " + file + " from 10 to 6 steps"), std::string::npos)
      << out_.str();
  std::ifstream in(options.out);
  const std::string small((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(small.rfind("# Reduced by vmm-run reduce from " + file, 0), 0u) << small;
  EXPECT_EQ(small.find("op: unmap"), std::string::npos) << small;  // after the check: not needed
  EXPECT_EQ(Run({options.out}), kExitCheckFailed) << err_.str();   // and it fails as it said
  options.out = file;
  EXPECT_EQ(RunReduceCommand(options, out_, err_), kExitInputError);
  EXPECT_NE(err_.str().find("is the scenario itself"), std::string::npos) << err_.str();
  options.file = Write("pass.yaml", kPassing);
  options.out = (dir_ / "nothing.yaml").string();
  EXPECT_EQ(RunReduceCommand(options, out_, err_), kExitInputError);
  EXPECT_NE(err_.str().find("reduce keeps a failure or such a fault, and there is none to keep"),
            std::string::npos)
      << err_.str();
  EXPECT_FALSE(fs::exists(options.out));
}

// import-snapshot writes a scenario that then runs, to a file or stdout; a file that is not a
// snapshot is an input error naming the file and the byte.
TEST_F(CommandsTest, ImportSnapshotWritesAScenarioThatRuns) {
  ImportSnapshotOptions options;
  options.file =
      std::string(VMMRUN_SOURCE_DIR) + "/tests/fixtures/torch_snapshots/expandable.pickle";
  options.out = (dir_ / "imported.yaml").string();
  options.name = "imported";
  EXPECT_EQ(RunImportSnapshotCommand(options, out_, err_), kExitPass) << err_.str();
  EXPECT_NE(err_.str().find("wrote " + options.out + " (147 steps)"), std::string::npos)
      << err_.str();
  EXPECT_EQ(Run({options.out}), kExitPass) << err_.str();
  options.out.clear();
  options.data = false;
  std::ostringstream text;
  EXPECT_EQ(RunImportSnapshotCommand(options, text, err_), kExitPass);
  EXPECT_EQ(text.str().find("op: memset"), std::string::npos);  // --no-data: VMM calls alone
  EXPECT_NE(text.str().find("{op: map, buffer: R0, alloc: h0, offset: 0}"), std::string::npos);
  options.file = Write("not.pickle", "name: a scenario\n");
  std::ostringstream err;
  EXPECT_EQ(RunImportSnapshotCommand(options, text, err), kExitInputError);
  EXPECT_EQ(err.str(), options.file +
                           ": error: pickle byte 0: opcode 0x6e: not read by vmm-run "
                           "(protocol 0/1 text opcodes, extensions and persistent ids "
                           "are not part of an allocator snapshot)\n");
}

TEST_F(CommandsTest, SeveralScenariosTakeTheMostSevereCode) {
  std::string failing = kPassing;
  failing.replace(failing.find("name: pass"), 10, "name: fail");
  failing.replace(failing.find("snapshot: s}\n  - {op: unmap"), 12,
                  "snapshot: s, expect: different}");
  const std::string pass = Write("pass.yaml", kPassing), fail = Write("fail.yaml", failing);
  const std::string bad = Write("bad.yaml", "name: bad\nsteps: []\nextra: 1\n");
  EXPECT_EQ(Run({pass, fail}), kExitCheckFailed);
  EXPECT_EQ(Run({fail, bad, pass}), kExitInputError);  // 2 outranks 1
}

TEST_F(CommandsTest, ValidateAndSteps) {
  ValidateOptions validate;
  validate.files = {Write("pass.yaml", kPassing)};
  EXPECT_EQ(RunValidateCommand(validate, out_, err_), kExitPass);
  EXPECT_NE(out_.str().find(": ok · scenario 'pass' · 10 steps"), std::string::npos);
  validate.files = {Write("bad.yaml", "name: x\nsteps:\n  - {op: free, buffer: Z}\n")};
  EXPECT_EQ(RunValidateCommand(validate, out_, err_), kExitInputError);
  EXPECT_NE(err_.str().find(":3:24: error: unknown buffer 'Z'"), std::string::npos) << err_.str();

  StepsOptions steps;
  steps.op = "mapp";
  EXPECT_EQ(RunStepsCommand(steps, out_, err_), kExitInputError);
  EXPECT_NE(err_.str().find("error: unknown op 'mapp', did you mean 'map'?"), std::string::npos)
      << err_.str();
  steps.op = "map";
  std::ostringstream doc;
  EXPECT_EQ(RunStepsCommand(steps, doc, err_), kExitPass);
  EXPECT_NE(doc.str().find("map"), std::string::npos);
}

TEST_F(CommandsTest, ValidatingASweepIsBoundedBeforeAnyPointIsBuilt) {
  // 10,000 points x 4,000 steps: refused at once (it would have planned for minutes).
  ValidateOptions validate;
  validate.files = {Write("sweep.yaml",
                          "name: sw\nvars: {x: 0}\nsweep: {x: {range: [0, 10000]}}\n"
                          "buffers: {A: {shape: [1024]}}\nsteps:\n  - for: i\n"
                          "    in: {range: [0, 2000]}\n"
                          "    steps: [{op: reserve, buffer: A}, {op: free, buffer: A}]\n")};
  EXPECT_EQ(RunValidateCommand(validate, out_, err_), kExitInputError);
  EXPECT_NE(err_.str().find("error: validating the sweep's 10000 points would plan 10000 x 4000 "
                            "steps, past 10000000"),
            std::string::npos)
      << err_.str();
}

TEST_F(CommandsTest, DiffOfAReportWithItselfIsClean) {
  ASSERT_EQ(Run({Write("pass.yaml", kPassing)}), kExitPass) << err_.str();
  DiffOptions diff;
  diff.base = diff.now = (dir_ / "reports" / "pass.host.json").string();
  EXPECT_EQ(RunDiffCommand(diff, out_, err_), kExitPass) << err_.str();
  EXPECT_NE(out_.str().find("no differences"), std::string::npos) << out_.str();
  diff.now = (dir_ / "missing.json").string();
  EXPECT_EQ(RunDiffCommand(diff, out_, err_), kExitInputError);
}

TEST_F(CommandsTest, MemsetPoisonIsReadBackByCheckValue) {
  const std::string text = R"(name: poison
buffers: {A: {shape: [1024]}}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p, size: 2MiB}
  - {op: map, buffer: A, alloc: p}
  - {op: set_access, buffer: A}
  - {op: memset, buffer: A, byte: 0xA5}
  - {op: check_value, name: poisoned, buffer: A, value: "0xA5A5A5A5"}
  - {op: check_value, name: not zero, buffer: A, value: 0, expect: different}
  - {op: memset, buffer: A, value: 7}
  - {op: check_value, name: still poisoned, buffer: A, byte: 0xA5}
)";
  RunOptions options;
  options.files = {Write("poison.yaml", text)};
  options.backend = "host";
  options.report_dir = (dir_ / "reports").string();
  EXPECT_EQ(RunRunCommand(options, out_, err_), kExitCheckFailed) << err_.str();
  const std::string log = out_.str();
  EXPECT_NE(log.find("A ← 0xa5a5a5a5 · 1024 elements"), std::string::npos) << log;
  EXPECT_NE(log.find("poisoned                        PASS  all 0xa5a5a5a5: YES (0 of 1024"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("not zero                        PASS  all 0x0: NO (1024 of 1024 differ; "
                     "expected different)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("still poisoned                  FAIL"), std::string::npos) << log;
  EXPECT_NE(log.find("element 0: want 0xa5a5a5a5, got 0x7"), std::string::npos) << log;
}

TEST_F(CommandsTest, UnmetRequirementsSkipTheRunWithExitFive) {
  std::string needy = kPassing;
  needy.replace(needy.find("name: pass"), 10,
                "name: needy\nrequires: {backend: host, device_memory: 1048576GiB}");
  RunOptions options;
  options.files = {Write("needy.yaml", needy)};
  options.backend = "host";
  options.report_dir = (dir_ / "reports").string();
  options.junit = (dir_ / "junit.xml").string();
  EXPECT_EQ(RunRunCommand(options, out_, err_), kExitSkipped) << err_.str();
  EXPECT_NE(
      out_.str().find("result: SKIPPED · needy · requires 1024 TiB of device memory; host CPU"),
      std::string::npos)
      << out_.str();
  EXPECT_EQ(out_.str().find("  0  reserve"), std::string::npos);  // nothing ran
  std::ifstream junit(options.junit);
  const std::string xml((std::istreambuf_iterator<char>(junit)), {});
  EXPECT_NE(xml.find("skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"requires 1024 TiB of device memory"), std::string::npos);

  // Diff: a skipped run against a passing one is a skipped row, not a failure and not a pass.
  ASSERT_EQ(Run({Write("pass.yaml", kPassing)}), kExitPass);
  std::string same_name = needy;
  same_name.replace(same_name.find("name: needy"), 11, "name: pass");
  ASSERT_EQ(Run({Write("pass2.yaml", same_name)}), kExitSkipped);  // overwrites pass.host.json
  const std::string skipped_report = (dir_ / "skipped.json").string();
  fs::rename(dir_ / "reports" / "pass.host.json", skipped_report);
  ASSERT_EQ(Run({Write("pass.yaml", kPassing)}), kExitPass);
  DiffOptions diff;
  diff.base = (dir_ / "reports" / "pass.host.json").string();
  diff.now = skipped_report;
  diff.explain = true;
  std::ostringstream text;
  EXPECT_EQ(RunDiffCommand(diff, text, err_), kExitPass) << err_.str();
  EXPECT_NE(text.str().find("NEW was skipped: requires 1024 TiB of device memory"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find(", 1 skipped"), std::string::npos) << text.str();

  // A wrong backend skips too.
  std::string cuda_only = kPassing;
  cuda_only.replace(cuda_only.find("name: pass"), 10, "name: cuda_only\nrequires: {backend: cuda}");
  std::ostringstream log;
  options.files = {Write("cuda_only.yaml", cuda_only)};
  options.junit.clear();
  EXPECT_EQ(RunRunCommand(options, log, err_), kExitSkipped);
  EXPECT_NE(log.str().find("requires the cuda backend; this run uses host"), std::string::npos);

  // A capability the host twin lacks (it never grants compression) skips, with what its trial
  // returned; one it has (POSIX fd handles: a memfd) runs.
  std::string compressed = kPassing;
  compressed.replace(compressed.find("name: pass"), 10,
                     "name: compressed\nrequires: {capabilities: [posix_fd, compression]}");
  std::ostringstream skipped_log;
  options.files = {Write("compressed.yaml", compressed)};
  EXPECT_EQ(RunRunCommand(options, skipped_log, err_), kExitSkipped);
  EXPECT_NE(skipped_log.str().find("result: SKIPPED · compressed · requires capability "
                                   "'compression'; host CPU"),
            std::string::npos)
      << skipped_log.str();
  EXPECT_NE(skipped_log.str().find("lacks it: a trial create of 2 MiB succeeded, but compression "
                                   "was not granted (read back uncompressed)"),
            std::string::npos)
      << skipped_log.str();
  std::string fd = kPassing;
  fd.replace(fd.find("name: pass"), 10, "name: fd\nrequires: {capabilities: [posix_fd]}");
  options.files = {Write("fd.yaml", fd)};
  std::ostringstream ran;
  EXPECT_EQ(RunRunCommand(options, ran, err_), kExitPass) << ran.str();
}

}  // namespace
}  // namespace vmm
