#include "runner/isolate/frame_channel.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace vmm::isolate {
namespace {

Status Errno(const char* call) { return RuntimeError(std::string(call) + ": " + strerror(errno)); }

std::string LengthPrefix(size_t n) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

}  // namespace

StatusOr<std::pair<UniqueFd, UniqueFd>> FrameChannel::SocketPair() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return Errno("socketpair");
  return std::pair<UniqueFd, UniqueFd>{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Status FrameChannel::Send(const std::string& payload, std::span<const int> fds) {
  if (payload.size() > kMaxFrameBytes) {
    return RuntimeError("frame of " + std::to_string(payload.size()) + " bytes is over the " +
                        std::to_string(kMaxFrameBytes) + "-byte limit");
  }
  if (fds.size() > kMaxFdsPerFrame) return RuntimeError("too many descriptors in one frame");
  const std::string frame = LengthPrefix(payload.size()) + payload;
  size_t sent = 0;
  bool with_fds = !fds.empty();
  while (sent < frame.size()) {
    iovec iov{const_cast<char*>(frame.data() + sent), frame.size() - sent};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerFrame)];
    if (with_fds) {
      const size_t bytes = sizeof(int) * fds.size();
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(bytes);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(bytes);
      std::memcpy(CMSG_DATA(c), fds.data(), bytes);
    }
    const ssize_t n = sendmsg(fd(), &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("sendmsg");
    }
    sent += static_cast<size_t>(n);
    with_fds = false;  // the descriptors went with the first bytes
  }
  return Status::Ok();
}

Status FrameChannel::ReadSome(bool* eof) {
  *eof = false;
  char buf[64 * 1024];
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerFrame)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(fd(), &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Errno("recvmsg");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds_.emplace_back(received);
    }
  }
  if ((msg.msg_flags & MSG_CTRUNC) != 0)
    return RuntimeError("recvmsg: more descriptors arrived than one frame may carry");
  if (n == 0) {
    *eof = true;
    return Status::Ok();
  }
  in_.append(buf, static_cast<size_t>(n));
  return Status::Ok();
}

bool FrameChannel::NextFrame(std::string* payload) {
  if (in_.size() < 4) return false;
  size_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<size_t>(static_cast<unsigned char>(in_[i])) << (8 * i);
  if (n > kMaxFrameBytes) {
    bad_frame_ = true;
    return false;
  }
  if (in_.size() < 4 + n) return false;
  payload->assign(in_, 4, n);
  in_.erase(0, 4 + n);
  return true;
}

Status FrameChannel::Receive(std::string* payload, bool* eof) {
  *eof = false;
  while (!NextFrame(payload)) {
    if (bad_frame_) return RuntimeError("a frame longer than the limit arrived");
    VMM_RETURN_IF_ERROR(ReadSome(eof));
    if (*eof) {
      if (!in_.empty()) return RuntimeError("the peer closed the channel inside a frame");
      return Status::Ok();
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<UniqueFd>> FrameChannel::TakeFds(size_t count) {
  if (fds_.size() < count) {
    return RuntimeError("expected " + std::to_string(count) + " descriptors, " +
                        std::to_string(fds_.size()) + " arrived");
  }
  std::vector<UniqueFd> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    out.push_back(std::move(fds_.front()));
    fds_.pop_front();
  }
  return out;
}

}  // namespace vmm::isolate
