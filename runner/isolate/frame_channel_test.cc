// The isolate protocol's transport: frames arrive whole and in order whatever the read sizes,
// named descriptors cross the socket (a memfd stands in for an exported allocation handle) and the
// child finds them by name, and nothing leaks.
#include "runner/isolate/frame_channel.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <thread>

#include "runner/isolate/child_request.h"

namespace vmm::isolate {
namespace {

size_t OpenFds() {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) (void)e, ++n;
  return n;
}

// A memfd holding `text`, as an exporter would hand over an allocation.
UniqueFd MemfdWith(const std::string& text) {
  UniqueFd fd(memfd_create("vmm-test", MFD_CLOEXEC));
  EXPECT_TRUE(fd);
  EXPECT_EQ(write(fd.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  return fd;
}

std::string ReadAll(int fd) {
  std::string out(64, '\0');
  const ssize_t n = pread(fd, out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

TEST(FrameChannelTest, FramesArriveWholeAndInOrder) {
  auto pair = FrameChannel::SocketPair();
  ASSERT_TRUE(pair.ok());
  FrameChannel a(std::move(pair->first)), b(std::move(pair->second));
  const std::string big(1 << 20, 'x');  // larger than one read and than the socket buffer
  std::thread writer([&] {
    EXPECT_TRUE(a.Send("first").ok());
    EXPECT_TRUE(a.Send("").ok());
    EXPECT_TRUE(a.Send(big).ok());
  });
  std::string frame;
  bool eof = true;
  ASSERT_TRUE(b.Receive(&frame, &eof).ok());
  EXPECT_FALSE(eof);
  EXPECT_EQ(frame, "first");
  ASSERT_TRUE(b.Receive(&frame, &eof).ok());
  EXPECT_EQ(frame, "");
  ASSERT_TRUE(b.Receive(&frame, &eof).ok());
  EXPECT_EQ(frame, big);
  writer.join();
  { FrameChannel closing(std::move(a)); }
  ASSERT_TRUE(b.Receive(&frame, &eof).ok());
  EXPECT_TRUE(eof);
}

TEST(FrameChannelTest, NamedDescriptorsReachTheChildAndAreFoundByName) {
  const size_t before = OpenFds();
  {
    auto pair = FrameChannel::SocketPair();
    ASSERT_TRUE(pair.ok());
    FrameChannel parent(std::move(pair->first)), child(std::move(pair->second));
    UniqueFd kv = MemfdWith("kv cache pages"), weights = MemfdWith("weights");
    report::BlockRequest request;
    request.scenario_path = "s.yaml";
    request.block = 2;
    request.backend = "host";
    request.fds = {"kv", "weights"};
    const int raw[] = {kv.get(), weights.get()};
    ASSERT_TRUE(parent.Send(report::EncodeBlockRequest(request), raw).ok());

    StatusOr<ReceivedBlock> got = ReceiveBlock(child);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(got->request.block, 2);
    ASSERT_EQ(got->fds.size(), 2u);
    // New descriptors for the same open files: the contents, and the same inode.
    EXPECT_EQ(ReadAll(got->fds.at("kv").get()), "kv cache pages");
    EXPECT_EQ(ReadAll(got->fds.at("weights").get()), "weights");
    EXPECT_NE(got->fds.at("kv").get(), kv.get());
    struct stat sent_stat, got_stat;
    ASSERT_EQ(fstat(kv.get(), &sent_stat), 0);
    ASSERT_EQ(fstat(got->fds.at("kv").get(), &got_stat), 0);
    EXPECT_EQ(sent_stat.st_ino, got_stat.st_ino);
    EXPECT_EQ(child.queued_fds(), 0u);
  }
  EXPECT_EQ(OpenFds(), before);  // sockets, memfds and received copies all closed
}

TEST(FrameChannelTest, ARequestWhoseDescriptorsDidNotComeIsRefused) {
  auto pair = FrameChannel::SocketPair();
  ASSERT_TRUE(pair.ok());
  FrameChannel parent(std::move(pair->first)), child(std::move(pair->second));
  report::BlockRequest request;
  request.fds = {"kv"};
  ASSERT_TRUE(parent.Send(report::EncodeBlockRequest(request)).ok());
  StatusOr<ReceivedBlock> got = ReceiveBlock(child);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "expected 1 descriptors, 0 arrived");
}

TEST(FrameChannelTest, AnOversizedFrameBreaksTheStream) {
  auto pair = FrameChannel::SocketPair();
  ASSERT_TRUE(pair.ok());
  FrameChannel receiver(std::move(pair->second));
  const unsigned char header[4] = {0xff, 0xff, 0xff, 0x7f};
  ASSERT_EQ(write(pair->first.get(), header, 4), 4);
  std::string frame;
  bool eof = false;
  EXPECT_FALSE(receiver.Receive(&frame, &eof).ok());
  EXPECT_TRUE(receiver.broken());
}

}  // namespace
// A together group's child waits for the parent's start frame after its hello; a lone block's
// child does not wait; anything else on the channel is refused, and so is a closed channel.
TEST(FrameChannelTest, AGroupChildStartsOnlyOnTheParentsStartFrame) {
  auto pair = FrameChannel::SocketPair();
  ASSERT_TRUE(pair.ok());
  std::optional<FrameChannel> parent(std::in_place, std::move(pair->first));
  FrameChannel child(std::move(pair->second));
  report::BlockRequest lone, member;
  member.member = 2;
  EXPECT_TRUE(AwaitGroupStart(child, lone).ok());  // nothing was sent: a lone block goes on
  ASSERT_TRUE(parent->Send("hello?").ok());
  Status wrong = AwaitGroupStart(child, member);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.message(), "the parent sent something other than the group's start");
  ASSERT_TRUE(parent->Send(kGroupStartFrame).ok());
  EXPECT_TRUE(AwaitGroupStart(child, member).ok());
  parent.reset();
  Status closed = AwaitGroupStart(child, member);
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.message(), "the parent closed the channel before the group started");
}

}  // namespace vmm::isolate
