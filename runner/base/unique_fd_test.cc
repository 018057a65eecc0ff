#include "runner/base/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <utility>

namespace vmm {
namespace {

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(UniqueFdTest, ClosesOnceAfterMoves) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const int raw = pipe_fds[0];
  {
    UniqueFd a(raw);
    UniqueFd writer(pipe_fds[1]);
    EXPECT_TRUE(a);
    UniqueFd b = std::move(a);
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), raw);
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
  EXPECT_FALSE(IsOpen(pipe_fds[1]));
  EXPECT_FALSE(UniqueFd());
  EXPECT_FALSE(UniqueFd(-1));
}

}  // namespace
}  // namespace vmm
