#include "runner/isolate/child_block_runner.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace

Status ChildBlockRunner::RunBlock(const PlanStep& step, const BlockFds& fds, StepRecord& record) {
  const IsolatedBlock& block = *step.block;
  const auto start = Clock::now();
  const auto limit = std::chrono::nanoseconds(block.expect.limit_ns);
  auto deadline = start + kStartupLimit;  // until the child says it is ready (hello)
  const bool on_cuda = options_.backend == "cuda";
  KernelLog kernel_log = on_cuda ? KernelLog::OpenAtEnd() : KernelLog(UniqueFd(), "");

  StatusOr<std::pair<UniqueFd, UniqueFd>> sockets = FrameChannel::SocketPair();
  if (!sockets.ok()) return sockets.status().WithContext("isolate block");
  FrameChannel channel(std::move(sockets->first));
  StatusOr<ChildProcess> started =
      ChildProcess::Start(options_.exe, {"__child", "--parent", std::to_string(::getpid())},
                          std::move(sockets->second));
  if (!started.ok()) return started.status().WithContext("isolate block: starting the child");
  ChildProcess& child = started.value();

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
  // A child that dies at once closes its end: the send then fails, and how it ended says why.
  Status sent = channel.Send(report::EncodeBlockRequest(request), raw_fds);

  report::ChildRecord c;
  c.pid = child.pid();
  Gathered g;
  bool channel_open = sent.ok(), stderr_open = true, killed = false;
  while (channel_open || stderr_open) {
    if (StopRequested()) {
      c.stopped_by = SignalName(StopSignal());
      child.Kill();
      killed = true;
      break;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      c.timed_out = true;
      child.Kill();
      killed = true;
      break;
    }
    pollfd polls[2] = {{channel_open ? channel.fd() : -1, POLLIN, 0},
                       {stderr_open ? child.stderr_fd() : -1, POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    const int wait_ms = static_cast<int>(std::min<int64_t>(50, left.count() + 1));
    if (::poll(polls, 2, wait_ms) < 0 && errno != EINTR)
      return RuntimeError(std::string("isolate block: poll: ") + strerror(errno));
    if (channel_open && (polls[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      bool eof = false;
      Status read = channel.ReadSome(&eof);
      const bool was_ready = g.hello;
      TakeFrames(channel, &g);
      if (g.hello && !was_ready) deadline = Clock::now() + limit;
      if (!read.ok() || eof || channel.broken()) channel_open = false;
      if (!read.ok() && g.protocol_error.empty()) g.protocol_error = read.message();
    }
    if (stderr_open && (polls[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
      stderr_open = DrainStderr(child.stderr_fd(), &g.stderr_text);
  }
  // Both streams ended (the child exited or closed them), or it was killed: reap it. A child that
  // closed its streams but lingers gets until the deadline.
  int status = 0;
  while (!killed) {
    if (std::optional<int> s = child.TryWait()) {
      status = *s;
      break;
    }
    if (StopRequested() || Clock::now() >= deadline) {
      if (StopRequested()) {
        c.stopped_by = SignalName(StopSignal());
      } else {
        c.timed_out = true;
      }
      child.Kill();
      killed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (killed) status = child.Wait();
  if (channel_open) {  // whatever the child sent before it was killed
    bool eof = false;
    while (!eof && channel.ReadSome(&eof).ok() && !eof) TakeFrames(channel, &g);
    TakeFrames(channel, &g);
  }
  if (stderr_open) DrainStderr(child.stderr_fd(), &g.stderr_text);
  child.CloseStderr();

  if (WIFEXITED(status) && !killed) c.exit_status = WEXITSTATUS(status);
  c.signal = SignalOf(status);
  c.stderr_text = g.stderr_text;
  c.fds = std::move(g.fds);
  const ChildEvent& done = g.done_event;
  if (g.done && !done.setup_error.empty()) {
    return RuntimeError("isolate block: the child could not run the block: " + done.setup_error);
  }
  if (!g.hello && !killed && c.signal.empty()) {
    return RuntimeError("isolate block: the child (pid " + std::to_string(c.pid) +
                        ") ended without answering" +
                        (g.protocol_error.empty() ? "" : ": " + g.protocol_error) +
                        (g.stderr_text.empty() ? "" : "; its stderr: " + g.stderr_text));
  }
  std::string ended_why;
  if (killed || !c.signal.empty()) {
    ended_why = !c.stopped_by.empty() ? "the child was killed: vmm-run got " + c.stopped_by
                : c.timed_out         ? "the child was still running at the block's limit (" +
                                    DurationText(block.expect.limit_ns) + ") and was killed"
                              : "the child was killed by " + c.signal + " while this step ran";
  }
  record.body = CompleteBody(block.plan, std::move(g.steps), ended_why);
  const bool check_failed = FindChildError(record.body, g.done ? done.end_error : "", &c);

  if (on_cuda) {
    std::vector<std::string> lines = kernel_log.ReadNew();
    std::optional<std::string> xid = XidLineForPid(lines, c.pid);
    const auto grace_end = Clock::now() + kXidGrace;
    while (!xid && kernel_log.readable() && c.error && Clock::now() < grace_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (std::string& l : kernel_log.ReadNew()) lines.push_back(std::move(l));
      xid = XidLineForPid(lines, c.pid);
    }
    c.fault_line = xid;
    c.fault_line_note =
        xid ? "kernel log"
        : !kernel_log.readable()
            ? "kernel log unreadable: " + kernel_log.why_unreadable()
            : "no NVRM Xid line for pid " + std::to_string(c.pid) + " in the kernel log";
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
