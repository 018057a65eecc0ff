// E2EProcessTest: the fixture of the end-to-end tests that run the vmm-run binary as a child
// process (vmm_run_process.h) in a scratch directory of their own: write inputs there, run, read
// the report or any file back. Header-only, for the e2e test binary.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "runner/report/report_io.h"
#include "tests/scratch_dir.h"
#include "tests/vmm_run_process.h"

namespace vmm {

class E2EProcessTest : public ::testing::Test {
 protected:
  // `prefix` names the scratch directory (<tmp>/<prefix>_<pid>_<test>).
  explicit E2EProcessTest(const std::string& prefix) : scratch_(prefix) {}

  std::string Path(const std::string& name) const { return scratch_.Path(name); }
  std::string Write(const std::string& name, const std::string& text) const {
    return scratch_.Write(name, text);
  }
  // Runs `vmm-run <args>` to the end, its output in log.txt of the scratch directory.
  Finished Run(const std::string& args, const std::string& shell = "") const {
    const std::string log = Path("log.txt");
    const auto start = Clock::now();
    return Wait(Spawn(args, log, shell), start, log);
  }
  // The report at `name` (a failed read fails the test and yields an empty report).
  report::Report Read(const std::string& name) const {
    StatusOr<report::Report> r = report::ReadReport(Path(name));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r.value() : report::Report{};
  }
  std::string Text(const std::string& name) const {
    std::ifstream in(Path(name));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  ScratchDir scratch_;
};

}  // namespace vmm
