#include "runner/base/stop_signal.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace vmm {
namespace {

TEST(StopSignalTest, NamesTheStopSignals) {
  EXPECT_EQ(SignalName(SIGINT), "SIGINT");
  EXPECT_EQ(SignalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(SignalName(SIGHUP), "SIGHUP");
  EXPECT_EQ(SignalName(10), "signal 10");
}

TEST(StopSignalTest, FirstRequestWins) {
  ClearStopRequest();
  EXPECT_FALSE(StopRequested());
  EXPECT_EQ(StopSignal(), 0);
  RequestStop(SIGTERM);
  RequestStop(SIGINT);
  EXPECT_TRUE(StopRequested());
  EXPECT_EQ(StopSignal(), SIGTERM);
  ClearStopRequest();
  EXPECT_FALSE(StopRequested());
}

// In a child: the first signal is recorded, the second exits at once with 128+N after removing
// the registered cleanup file.
TEST(StopSignalTest, SecondSignalRemovesTheCleanupFileAndExits) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("vmm_stop_signal_" + std::to_string(::getpid()) + ".tmp"))
                               .string();
  std::ofstream(path) << "partial";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InstallStopHandlers();
    SetCleanupPath(path);
    raise(SIGINT);
    if (StopSignal() != SIGINT || !std::filesystem::exists(path)) _exit(1);
    raise(SIGTERM);
    _exit(2);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_FALSE(std::filesystem::exists(path));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace vmm
