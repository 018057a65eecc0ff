#include "runner/base/exit_code.h"

#include <gtest/gtest.h>

#include <csignal>

namespace vmm {
namespace {

TEST(ExitCodeTest, SeverityOrderIsTheDocumentedRule) {
  // signal > internal > input error > step failed > check failed > unavailable > skipped > pass
  const int order[] = {ExitForSignal(SIGINT), kExitInternal,    kExitInputError, kExitStepFailed,
                       kExitCheckFailed,      kExitUnavailable, kExitSkipped,    kExitPass};
  for (size_t i = 0; i + 1 < std::size(order); ++i) {
    EXPECT_GT(ExitSeverity(order[i]), ExitSeverity(order[i + 1])) << order[i];
    EXPECT_EQ(WorseExit(order[i], order[i + 1]), order[i]);
    EXPECT_EQ(WorseExit(order[i + 1], order[i]), order[i]);
  }
  EXPECT_EQ(WorseExit(kExitUnavailable, kExitCheckFailed), kExitCheckFailed);
  EXPECT_EQ(WorseExit(kExitPass, kExitSkipped), kExitSkipped);
}

TEST(ExitCodeTest, SignalsAndStatuses) {
  EXPECT_EQ(ExitForSignal(SIGINT), 130);
  EXPECT_EQ(ExitForSignal(SIGTERM), 143);
  EXPECT_EQ(ExitForSignal(SIGHUP), 129);
  EXPECT_EQ(ExitMeaning(130), "signal 2 (SIGINT)");
  EXPECT_EQ(ExitMeaning(5), "skipped");
  EXPECT_EQ(ExitForStatus(InvalidInput("x")), 2);
  EXPECT_EQ(ExitForStatus(Unavailable("x")), 3);
  EXPECT_EQ(ExitForStatus(RuntimeError("x")), 4);
  EXPECT_EQ(ExitForStatus(InternalError("x")), 70);
  EXPECT_EQ(ExitSeverity(99), ExitSeverity(kExitInternal));  // unknown codes are bugs
  EXPECT_NE(ExitCodeTable().find("70  internal error"), std::string::npos);
}

}  // namespace
}  // namespace vmm
