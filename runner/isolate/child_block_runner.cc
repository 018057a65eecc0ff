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
#include <memory>
#include <optional>
#include <thread>

#include "runner/base/limits.h"
#include "runner/base/stop_signal.h"
#include "runner/isolate/block_outcome.h"
#include "runner/isolate/child_process.h"
#include "runner/isolate/child_request.h"
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
// Several sessions converse at once (a together group): ConverseAll polls them all.
class Session {
 public:
  Session(ChildProcess& child, FrameChannel& channel, std::chrono::nanoseconds limit,
          Clock::time_point run_start)
      : child_(child), channel_(channel), limit_(limit), run_start_(run_start) {
    c.pid = child.pid();
  }

  // Starts the conversation; `channel_open` is false when the request could not even be sent.
  // `awaits_start`: a child of a together group, which after its hello waits for Start.
  void Begin(bool channel_open, bool awaits_start) {
    channel_open_ = channel_open;
    awaits_start_ = awaits_start;
  }
  // Ready to start (said hello) or never will be (its channel closed, or it was killed).
  bool Settled() const { return g.hello || !channel_open_ || killed_; }
  // Sends a ready group child the start frame; its limit starts now.
  void Start() {
    if (!awaits_start_ || !g.hello || killed_) return;
    awaits_start_ = false;
    deadline_ = Clock::now() + limit_;
    if (!channel_.Send(kGroupStartFrame).ok()) channel_open_ = false;  // it ended: reaped as such
  }
  // Still reading the child's messages or stderr (not killed, not both at end of file).
  bool conversing() const { return !killed_ && (channel_open_ || stderr_open_); }
  Clock::time_point deadline() const { return deadline_; }

  // The two descriptors to poll (-1: closed).
  void AddPolls(std::vector<pollfd>* polls) const {
    polls->push_back({channel_open_ ? channel_.fd() : -1, POLLIN, 0});
    polls->push_back({stderr_open_ ? child_.stderr_fd() : -1, POLLIN, 0});
  }
  // Reads what the two polled descriptors have (polls: the two entries AddPolls added).
  void Handle(const pollfd* polls) {
    if (channel_open_ && (polls[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) ReadChannel();
    if (stderr_open_ && (polls[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
      stderr_open_ = DrainStderr(child_.stderr_fd(), &g.stderr_text);
  }

  // Kills the child when vmm-run is stopped or the deadline passed; true when it did.
  bool KillIfDue() {
    if (killed_) return true;
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

  // One step of reaping (a child that closed its streams but lingers gets until the deadline):
  // false while the child still runs; true once it was reaped, and then whatever it still sent
  // was taken and exit status, signal, stderr, descriptor names and end time are filled.
  bool TryReap() {
    if (reaped_) return true;
    if (!killed_ && !child_.TryWait() && !KillIfDue()) return false;
    const int status = child_.Wait();
    c.ended_ms = SinceRunStart();
    reaped_ = true;
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
    return true;
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
  double SinceRunStart() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - run_start_).count();
  }

  void ReadChannel() {
    bool eof = false;
    Status read = channel_.ReadSome(&eof);
    const bool was_ready = g.hello;
    TakeFrames(channel_, &g);
    if (g.hello && !was_ready) {  // ready: the limit starts (a group child's at Start)
      if (!awaits_start_) deadline_ = Clock::now() + limit_;
      c.ready_ms = SinceRunStart();
    }
    if (!read.ok() || eof || channel_.broken()) channel_open_ = false;
    if (!read.ok() && g.protocol_error.empty()) g.protocol_error = read.message();
  }

  ChildProcess& child_;
  FrameChannel& channel_;
  const std::chrono::nanoseconds limit_;
  const Clock::time_point run_start_;
  Clock::time_point deadline_ = Clock::now() + kStartupLimit;  // until the child is ready
  bool channel_open_ = false, stderr_open_ = true, killed_ = false, reaped_ = false;
  bool awaits_start_ = false;
};

// Reads every session's messages and stderr until all have ended or were killed (at a deadline or
// a stop signal); a child whose streams closed is reaped as soon as it exits, so that each child's
// ended_ms is its own. A together group's children (`group`) are started together once every one
// is settled (ready, or ended before it). A poll error is returned at once: the caller reaps the
// rest on every path.
Status ConverseAll(const std::vector<Session*>& sessions, bool group) {
  std::vector<Session*> active;
  std::vector<pollfd> polls;
  bool started = !group;
  while (true) {
    if (!started && std::all_of(sessions.begin(), sessions.end(),
                                [](const Session* s) { return s->Settled(); })) {
      for (Session* s : sessions) s->Start();
      started = true;
    }
    active.clear();
    polls.clear();
    auto next = Clock::time_point::max();
    bool exiting = false;  // a child that closed its streams and is not reaped yet
    for (Session* s : sessions) {
      if (!s->conversing() || s->KillIfDue()) {
        exiting = !s->TryReap() || exiting;
        continue;
      }
      active.push_back(s);
      next = std::min(next, s->deadline());
      s->AddPolls(&polls);
    }
    if (active.empty()) return Status::Ok();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
    const int wait_ms =
        static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, exiting ? 2 : 50));
    if (::poll(polls.data(), polls.size(), wait_ms) < 0 && errno != EINTR)
      return RuntimeError(std::string("isolate block: poll: ") + strerror(errno));
    for (size_t i = 0; i < active.size(); ++i) active[i]->Handle(&polls[2 * i]);
  }
}

// Reaps every session's child, each as soon as it ends (so each end time is its own).
void ReapAll(const std::vector<Session*>& sessions) {
  while (true) {
    bool all = true;
    for (Session* s : sessions) all = s->TryReap() && all;
    if (all) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// One child of a block, with what the parent holds for it. Members are destroyed in reverse: the
// session first, then the process (killed and reaped if still there), then the channel.
struct RunningChild {
  const PlanStep* step = nullptr;
  KernelLog kernel_log{UniqueFd(), ""};
  std::optional<FrameChannel> channel;
  std::optional<ChildProcess> process;
  std::optional<Session> session;
};

// Starts the child of `step` and sends it its request (block `block_index`, `member` of a group or
// -1) with the descriptors `fds`.
StatusOr<std::unique_ptr<RunningChild>> StartChild(const ChildBlockOptions& options,
                                                   const PlanStep& step, int block_index,
                                                   int member, const BlockRunner::BlockFds& fds) {
  auto child = std::make_unique<RunningChild>();
  child->step = &step;
  if (options.backend == "cuda") child->kernel_log = KernelLog::OpenAtEnd();
  StatusOr<std::pair<UniqueFd, UniqueFd>> sockets = FrameChannel::SocketPair();
  if (!sockets.ok()) return sockets.status().WithContext("isolate block");
  FrameChannel& channel = child->channel.emplace(std::move(sockets->first));
  // The request goes out before the conversation: a child that never reads it must not hold the
  // parent past its startup limit (a send then fails, and the child is killed when it is due).
  const timeval send_limit{std::chrono::duration_cast<std::chrono::seconds>(kStartupLimit).count(),
                           0};
  setsockopt(channel.fd(), SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof send_limit);
  const double started_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - options.run_start).count();
  StatusOr<ChildProcess> started = ChildProcess::Start(
      options.exe, {"__child", "--parent", std::to_string(::getpid())}, std::move(sockets->second));
  if (!started.ok()) return started.status().WithContext("isolate block: starting the child");
  ChildProcess& process = child->process.emplace(std::move(started).value());

  report::BlockRequest request;
  request.scenario_path = options.scenario_path;
  request.scenario_text = options.scenario_text;
  request.set = options.set;
  request.facts = options.facts;
  request.include_roots = options.include_roots;
  request.limits = ChangedLimits();  // the child reads the scenario under the parent's bounds
  request.block = block_index;
  request.member = member;
  request.backend = options.backend;
  request.device = options.device;
  request.host_devices = options.host_devices;
  std::vector<int> raw_fds;
  for (const auto& [name, fd] : fds) {
    request.fds.push_back(name);
    raw_fds.push_back(fd);
  }
  Session& session = child->session.emplace(
      process, channel, std::chrono::nanoseconds(step.block->expect.limit_ns), options.run_start);
  session.c.started_ms = started_ms;
  // A child that dies at once closes its end: the send then fails, and how it ended says why.
  session.Begin(channel.Send(report::EncodeBlockRequest(request), raw_fds).ok(), member >= 0);
  return child;
}

// The record of a reaped child's block: its body, the child's facts and the verdict.
Status FinishChild(const ChildBlockOptions& options, RunningChild& child, StepRecord& record) {
  const IsolatedBlock& block = *child.step->block;
  Session& session = *child.session;
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
  if (options.backend == "cuda") {
    ReadFaultLine(child.kernel_log, &c);
  } else if (g.done && !done.fault.empty()) {
    c.fault_line = done.fault;
    c.fault_line_note = "host fault trap";
  } else {
    c.fault_line_note = "no fault";
  }
  record.check = Judge(block.expect, c, check_failed);
  if (c.started_ms && c.ended_ms) record.wall_us = (*c.ended_ms - *c.started_ms) * 1000;
  record.child = std::move(c);
  return Status::Ok();
}

// Runs the children of `blocks` at the same time (top-level step `step_index`; `group`: the blocks
// of a together group there) and fills one record each.
Status RunChildren(const ChildBlockOptions& options, const std::vector<const PlanStep*>& blocks,
                   int step_index, bool group, const BlockRunner::BlockFds& fds,
                   std::vector<StepRecord>& records) {
  // Every child is started (and handed its request) before any is waited for. A child that
  // cannot be started ends the group: those already started are killed and reaped as `children`
  // goes out of scope (~ChildProcess).
  std::vector<std::unique_ptr<RunningChild>> children;
  std::vector<Session*> sessions;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i]->block == nullptr) return InternalError("isolate step without its block plan");
    StatusOr<std::unique_ptr<RunningChild>> child =
        StartChild(options, *blocks[i], step_index, group ? static_cast<int>(i) : -1, fds);
    if (!child.ok()) return child.status();
    sessions.push_back(&*child.value()->session);
    children.push_back(std::move(child).value());
  }
  const Status conversed = ConverseAll(sessions, group);
  ReapAll(sessions);  // on every path: never a zombie
  VMM_RETURN_IF_ERROR(conversed);
  Status first_error;
  for (size_t i = 0; i < children.size(); ++i) {
    Status finished = FinishChild(options, *children[i], records[i]);
    if (!finished.ok() && first_error.ok())
      first_error = group ? finished.WithContext("block '" + blocks[i]->label + "'") : finished;
  }
  return first_error;
}

}  // namespace

Status ChildBlockRunner::RunBlock(const PlanStep& step, const BlockFds& fds, StepRecord& record) {
  std::vector<StepRecord> records(1);
  records[0] = std::move(record);
  Status status = RunChildren(options_, {&step}, step.index, /*group=*/false, fds, records);
  record = std::move(records[0]);
  return status;
}

Status ChildBlockRunner::RunGroup(const PlanStep& group, const BlockFds& fds,
                                  std::vector<StepRecord>& records) {
  std::vector<const PlanStep*> blocks;
  for (const PlanStep& block : group.body) blocks.push_back(&block);
  if (records.size() != blocks.size())
    return InternalError("together group: one record per block expected");
  return RunChildren(options_, blocks, group.index, /*group=*/true, fds, records);
}

}  // namespace vmm::isolate
