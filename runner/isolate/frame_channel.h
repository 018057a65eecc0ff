// FrameChannel: messages (frames) over one end of a Unix stream socket, with file descriptors
// passed alongside (SCM_RIGHTS). The isolate protocol's transport between a parent vmm-run and the
// child that runs an isolate block.
//
// A frame is a 4-byte little-endian length and that many bytes (at most kMaxFrameBytes).
// Descriptors given to Send travel with the frame's first bytes; the receiver queues every
// descriptor it is handed (close-on-exec) and the protocol takes them with TakeFds when the frame
// that announced them has arrived. So a request can name its descriptors ("kv", "weights") and the
// child look them up by name.
//
// Errors are Statuses (kRuntime) naming the call; a peer that closed its end is end-of-stream
// (eof), not an error. Writes never raise SIGPIPE (MSG_NOSIGNAL). Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runner/base/status.h"
#include "runner/base/unique_fd.h"

namespace vmm::isolate {

inline constexpr size_t kMaxFrameBytes = 64u << 20;  // the largest scenario (16 MiB) escaped twice
inline constexpr size_t kMaxFdsPerFrame = 64;

class FrameChannel {
 public:
  explicit FrameChannel(UniqueFd socket) : socket_(std::move(socket)) {}

  // Two connected ends (socketpair AF_UNIX SOCK_STREAM, close-on-exec).
  static StatusOr<std::pair<UniqueFd, UniqueFd>> SocketPair();

  int fd() const { return socket_.get(); }

  // Sends one frame; `fds` (borrowed: the caller keeps them) ride along with its first byte.
  Status Send(const std::string& payload, std::span<const int> fds = {});

  // Blocks until one whole frame has arrived (*eof false) or the peer closed its end (*eof true).
  Status Receive(std::string* payload, bool* eof);

  // One read of whatever is available (the caller polled fd() for input): appends to the buffer
  // and queues received descriptors. *eof when the peer closed its end.
  Status ReadSome(bool* eof);
  // Takes the next whole frame out of the buffer; false when there is none yet.
  bool NextFrame(std::string* payload);

  // The first `count` queued descriptors, in arrival order; fails when fewer arrived.
  StatusOr<std::vector<UniqueFd>> TakeFds(size_t count);
  size_t queued_fds() const { return fds_.size(); }
  // A frame longer than kMaxFrameBytes was announced: nothing more can be read.
  bool broken() const { return bad_frame_; }

 private:
  UniqueFd socket_;
  std::string in_;            // received bytes not yet taken as frames
  std::deque<UniqueFd> fds_;  // received descriptors not yet taken
  bool bad_frame_ = false;    // a length past kMaxFrameBytes arrived: the stream is unusable
};

}  // namespace vmm::isolate
