#include "runner/isolate/child_block_runner.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "runner/base/stop_signal.h"
#include "runner/isolate/block_outcome.h"
#include "runner/isolate/child_process.h"
#include "runner/isolate/frame_channel.h"
#include "runner/isolate/kernel_log.h"
#include "runner/report/child_messages.h"

namespace vmm::isolate {
namespace {

using Clock = std::chrono::steady_clock;
using report::ChildEvent;
using report::StepRecord;

constexpr size_t kStderrKeep = 4096;  // bytes of the child's stderr kept in the record
// How long the kernel log is watched for a fault line the driver has not logged yet.
constexpr auto kXidGrace = std::chrono::milliseconds(300);
// How long a child may take to get ready (read the request, plan, open its engine): the block's
// own limit starts only then. A child not ready by now is killed as timed out.
constexpr auto kStartupLimit = std::chrono::seconds(60);

// What the parent gathers while the child runs.
struct Gathered {
  std::vector<StepRecord> steps;
  bool hello = false, done = false;
  std::vector<std::string> fds;  // the names the child says it received
  ChildEvent done_event;
  std::string protocol_error;  // a message that could not be read
  std::string stderr_text;
};

void KeepTail(std::string* text, const char* data, size_t n) {
  text->append(data, n);
  if (text->size() > kStderrKeep) text->erase(0, text->size() - kStderrKeep);
}

// Reads what the child's stderr has (non-blocking); false at end of file.
bool DrainStderr(int fd, std::string* text) {
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      KeepTail(text, buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0;  // EAGAIN: still open; 0: end of file
  }
}

void TakeFrames(FrameChannel& channel, Gathered* g) {
  std::string frame;
  while (channel.NextFrame(&frame)) {
    StatusOr<ChildEvent> event = report::DecodeChildEvent(frame);
    if (!event.ok()) {
      if (g->protocol_error.empty()) g->protocol_error = event.status().message();
      continue;
    }
    switch (event->kind) {
      case ChildEvent::Kind::kHello:
        g->hello = true;
        g->fds = std::move(event->fds);
        break;
      case ChildEvent::Kind::kStep:
        g->steps.push_back(std::move(event->step));
        break;
      case ChildEvent::Kind::kDone:
        g->done = true;
        g->done_event = std::move(event).value();
        break;
    }
  }
  if (channel.broken() && g->protocol_error.empty())
    g->protocol_error = "the child sent a frame longer than the limit";
}

// "SIGSEGV" etc. from a wait status, or "".
std::string SignalOf(int status) {
  return WIFSIGNALED(status) ? SignalText(WTERMSIG(status)) : std::string();
}

// The kernel log's Xid line for the child's pid (CUDA), waiting a moment for a fault the driver
// has not logged yet; fills fault_line and its note.
void ReadFaultLine(KernelLog& log, report::ChildRecord* c) {
  std::vector<std::string> lines = log.ReadNew();
  std::optional<std::string> xid = XidLineForPid(lines, c->pid);
  const auto grace_end = Clock::now() + kXidGrace;
  while (!xid && log.readable() && c->error && Clock::now() < grace_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (std::string& l : log.ReadNew()) lines.push_back(std::move(l));
    xid = XidLineForPid(lines, c->pid);
  }
  c->fault_line = xid;
  c->fault_line_note = xid               ? "kernel log"
                       : !log.readable() ? "kernel log unreadable: " + log.why_unreadable()
                                         : "no NVRM Xid line for pid " + std::to_string(c->pid) +
                                               " in the kernel log";
}

// One child from start to reaped: the conversation with it, its time limit and stop signals.
class Session {
 public:
  Session(ChildProcess& child, FrameChannel& channel, std::chrono::nanoseconds limit)
      : child_(child), channel_(channel), limit_(limit) {
    c.pid = child.pid();
  }

  // Reads the child's messages and stderr until both end, or kills it at the deadline or at a
  // stop signal. `channel_open` is false when the request could not even be sent.
  Status Converse(bool channel_open) {
    channel_open_ = channel_open;
    while (channel_open_ || stderr_open_) {
      if (KillIfDue()) return Status::Ok();
      pollfd polls[2] = {{channel_open_ ? channel_.fd() : -1, POLLIN, 0},
                         {stderr_open_ ? child_.stderr_fd() : -1, POLLIN, 0}};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
      const int wait_ms = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 50));
      if (::poll(polls, 2, wait_ms) < 0 && errno != EINTR)
        return RuntimeError(std::string("isolate block: poll: ") + strerror(errno));
      if (channel_open_ && (polls[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) ReadChannel();
      if (stderr_open_ && (polls[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
        stderr_open_ = DrainStderr(child_.stderr_fd(), &g.stderr_text);
    }
    return Status::Ok();
  }

  // Reaps the child (a child that closed its streams but lingers gets until the deadline), then
  // takes whatever it still sent. Fills exit status, signal, stderr and the descriptor names.
  void Reap() {
    while (!killed_ && !child_.TryWait()) {
      if (KillIfDue()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const int status = child_.Wait();
    if (channel_open_) {  // the child is gone: its end is closed, these reads end
      bool eof = false;
      while (!eof && channel_.ReadSome(&eof).ok()) TakeFrames(channel_, &g);
      TakeFrames(channel_, &g);
    }
    if (stderr_open_) DrainStderr(child_.stderr_fd(), &g.stderr_text);
    child_.CloseStderr();
    if (WIFEXITED(status) && !killed_) c.exit_status = WEXITSTATUS(status);
    c.signal = SignalOf(status);
    c.stderr_text = g.stderr_text;
    c.fds = std::move(g.fds);
  }

  // Why the step the child was running did not end ("" when the child ended by itself).
  std::string EndedWhy() const {
    if (!killed_ && c.signal.empty()) return "";
    if (!c.stopped_by.empty()) return "the child was killed: vmm-run got " + c.stopped_by;
    if (c.timed_out) {
      return "the child was still running at the block's limit (" + DurationText(limit_.count()) +
             ") and was killed";
    }
    return "the child was killed by " + c.signal + " while this step ran";
  }
  bool killed() const { return killed_; }

  report::ChildRecord c;
  Gathered g;

 private:
  // Kills the child when vmm-run is stopped or the deadline passed; true when it did.
  bool KillIfDue() {
    if (StopRequested()) {
      c.stopped_by = SignalName(StopSignal());
    } else if (Clock::now() >= deadline_) {
      c.timed_out = true;
    } else {
      return false;
    }
    child_.Kill();
    killed_ = true;
    return true;
  }

  void ReadChannel() {
    bool eof = false;
    Status read = channel_.ReadSome(&eof);
    const bool was_ready = g.hello;
    TakeFrames(channel_, &g);
    if (g.hello && !was_ready) deadline_ = Clock::now() + limit_;  // ready: the limit starts
    if (!read.ok() || eof || channel_.broken()) channel_open_ = false;
    if (!read.ok() && g.protocol_error.empty()) g.protocol_error = read.message();
  }

  ChildProcess& child_;
  FrameChannel& channel_;
  const std::chrono::nanoseconds limit_;
  Clock::time_point deadline_ = Clock::now() + kStartupLimit;  // until the child is ready
  bool channel_open_ = false, stderr_open_ = true, killed_ = false;
};

}  // namespace

Status ChildBlockRunner::RunBlock(const PlanStep& step, const BlockFds& fds, StepRecord& record) {
  const IsolatedBlock& block = *step.block;
  const auto start = Clock::now();
  const bool on_cuda = options_.backend == "cuda";
  KernelLog kernel_log = on_cuda ? KernelLog::OpenAtEnd() : KernelLog(UniqueFd(), "");

  StatusOr<std::pair<UniqueFd, UniqueFd>> sockets = FrameChannel::SocketPair();
  if (!sockets.ok()) return sockets.status().WithContext("isolate block");
  FrameChannel channel(std::move(sockets->first));
  // The request goes out before the conversation: a child that never reads it must not hold the
  // parent past its startup limit (a send then fails, and the child is killed when it is due).
  const timeval send_limit{std::chrono::duration_cast<std::chrono::seconds>(kStartupLimit).count(),
                           0};
  setsockopt(channel.fd(), SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof send_limit);
  StatusOr<ChildProcess> started =
      ChildProcess::Start(options_.exe, {"__child", "--parent", std::to_string(::getpid())},
                          std::move(sockets->second));
  if (!started.ok()) return started.status().WithContext("isolate block: starting the child");

  report::BlockRequest request;
  request.scenario_path = options_.scenario_path;
  request.scenario_text = options_.scenario_text;
  request.set = options_.set;
  request.block = step.index;
  request.backend = options_.backend;
  request.device = options_.device;
  std::vector<int> raw_fds;
  for (const auto& [name, fd] : fds) {
    request.fds.push_back(name);
    raw_fds.push_back(fd);
  }
  Session session(started.value(), channel, std::chrono::nanoseconds(block.expect.limit_ns));
  // A child that dies at once closes its end: the send then fails, and how it ended says why.
  const Status sent = channel.Send(report::EncodeBlockRequest(request), raw_fds);
  const Status conversed = session.Converse(sent.ok());
  session.Reap();  // on every path: never a zombie
  VMM_RETURN_IF_ERROR(conversed);

  report::ChildRecord& c = session.c;
  Gathered& g = session.g;
  const ChildEvent& done = g.done_event;
  if (g.done && !done.setup_error.empty())
    return RuntimeError("isolate block: the child could not run the block: " + done.setup_error);
  if (!g.hello && !session.killed() && c.signal.empty()) {
    return RuntimeError("isolate block: the child (pid " + std::to_string(c.pid) +
                        ") ended without answering" +
                        (g.protocol_error.empty() ? "" : ": " + g.protocol_error) +
                        (g.stderr_text.empty() ? "" : "; its stderr: " + g.stderr_text));
  }
  record.body = CompleteBody(block.plan, std::move(g.steps), session.EndedWhy());
  const bool check_failed = FindChildError(record.body, g.done ? done.end_error : "", &c);
  if (on_cuda) {
    ReadFaultLine(kernel_log, &c);
  } else if (g.done && !done.fault.empty()) {
    c.fault_line = done.fault;
    c.fault_line_note = "host fault trap";
  } else {
    c.fault_line_note = "no fault";
  }
  record.check = Judge(block.expect, c, check_failed);
  record.wall_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  record.child = std::move(c);
  return Status::Ok();
}

}  // namespace vmm::isolate
